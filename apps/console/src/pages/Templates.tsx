import {
  Button,
  Group,
  NumberInput,
  Paper,
  Select,
  Stack,
  Switch,
  Table,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ErrorAlert } from '../ui';
import { api, ok } from '../api/client';

const RUNTYPES = [
  { value: 'ssh', label: 'SSH' },
  { value: 'jupyter', label: 'Jupyter' },
  { value: 'args', label: "The image's own entrypoint (args)" },
];

/** The caller's templates (image, env, on-start, run type, disk): create and delete; rent from them in the rent dialog. */
export function TemplatesPage() {
  const queries = useQueryClient();
  const templates = useQuery({ queryKey: ['templates'], queryFn: () => ok(api.GET('/api/v0/template')) });
  const [name, setName] = useState('');
  const [image, setImage] = useState('');
  const [env, setEnv] = useState('');
  const [onstart, setOnstart] = useState('');
  const [runtype, setRuntype] = useState<string | null>('ssh');
  const [disk, setDisk] = useState<number | string>(10);
  const [isPrivate, setPrivate] = useState(true);
  const create = useMutation({
    mutationFn: () =>
      ok(
        api.POST('/api/v0/template', {
          body: {
            name: name.trim(),
            image: image.trim(),
            env: env.trim() || undefined,
            onstart: onstart || undefined,
            runtype: runtype ?? 'ssh',
            recommended_disk_space: Number(disk) || undefined,
            private: isPrivate,
            // No private registry from the console (the document requires the fields; empty means none).
            docker_login_repo: '',
            docker_login_user: '',
            docker_login_pass: '',
          },
        }),
      ),
    onSuccess: async () => {
      setName('');
      setImage('');
      setEnv('');
      setOnstart('');
      await queries.invalidateQueries({ queryKey: ['templates'] });
    },
  });
  const remove = useMutation({
    mutationFn: (hashId: string) => ok(api.DELETE('/api/v0/template', { body: { hash_id: hashId } })),
    onSettled: () => queries.invalidateQueries({ queryKey: ['templates'] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Stack>
      <Title order={1} size="h2">
        Templates
      </Title>
      <ErrorAlert error={templates.error ?? remove.error} />
      <Table.ScrollContainer minWidth={560}>
        <Table aria-label="Templates">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Image</Table.Th>
              <Table.Th>Run type</Table.Th>
              <Table.Th>Disk</Table.Th>
              <Table.Th>Visibility</Table.Th>
              <Table.Th>
                <span aria-hidden="true" />
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(templates.data?.templates ?? []).map((t) => (
              <Table.Tr key={t.hash_id}>
                <Table.Td>{t.name}</Table.Td>
                <Table.Td>{t.image}</Table.Td>
                <Table.Td>{t.runtype ?? '–'}</Table.Td>
                <Table.Td>{t.recommended_disk_space ? `${t.recommended_disk_space} GB` : '–'}</Table.Td>
                <Table.Td>{t.private ? 'private' : 'public'}</Table.Td>
                <Table.Td>
                  <Button
                    size="xs"
                    color="red"
                    variant="light"
                    aria-label={`Delete template ${t.name}`}
                    onClick={() => remove.mutate(t.hash_id)}
                  >
                    Delete
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <Paper withBorder p="md" component="form" onSubmit={submit} aria-label="New template">
        <Stack>
          <Title order={2} size="h4">
            New template
          </Title>
          <ErrorAlert error={create.error} />
          <Group grow align="flex-start">
            <TextInput
              label="Template name"
              required
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
            />
            <TextInput
              label="Template image"
              required
              value={image}
              onChange={(e) => setImage(e.currentTarget.value)}
            />
          </Group>
          <Group grow align="flex-start">
            <Select
              label="Template run type"
              allowDeselect={false}
              data={RUNTYPES}
              value={runtype}
              onChange={setRuntype}
            />
            <NumberInput label="Recommended disk, GB" min={1} max={4096} value={disk} onChange={setDisk} />
          </Group>
          <TextInput
            label="Docker options"
            description="As the vastai CLI takes them, e.g. -e TZ=UTC -p 8080:8080"
            value={env}
            onChange={(e) => setEnv(e.currentTarget.value)}
          />
          <Textarea
            label="Template on-start script"
            autosize
            minRows={2}
            maxLength={4048}
            value={onstart}
            onChange={(e) => setOnstart(e.currentTarget.value)}
          />
          <Switch
            label="Private (only you can rent from it)"
            checked={isPrivate}
            onChange={(e) => setPrivate(e.currentTarget.checked)}
          />
          <Group>
            <Button type="submit" loading={create.isPending}>
              Create template
            </Button>
          </Group>
        </Stack>
      </Paper>
    </Stack>
  );
}
