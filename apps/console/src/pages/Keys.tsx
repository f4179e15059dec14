import {
  Alert,
  Button,
  Checkbox,
  Code,
  CopyButton,
  Group,
  Paper,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ErrorAlert } from '../ui';
import { api, ok } from '../api/client';
import { when } from '../format';

/** The permission categories of a scoped key (docs/api.md), in the order the editor shows them. */
export const CATEGORIES: { name: string; label: string }[] = [
  { name: 'user_read', label: 'Account: read' },
  { name: 'user_write', label: 'Account: change (keys, SSH keys, templates, 2FA)' },
  { name: 'instance_read', label: 'Instances: read (list, logs, volumes)' },
  { name: 'instance_write', label: 'Instances: rent, stop, start, destroy' },
  { name: 'billing_read', label: 'Billing: read' },
  { name: 'billing_write', label: 'Billing: transfer credit' },
  { name: 'machine_read', label: 'Machines: read' },
  { name: 'machine_write', label: 'Machines: list, price, maintenance' },
  { name: 'team_read', label: 'Team: read' },
  { name: 'team_write', label: 'Team: change roles' },
  { name: 'misc', label: 'Miscellaneous' },
];

/** The categories a key's permissions object grants (`{api: {<category>: {}}}`), or null for full access. */
function grantedOf(permissions: unknown): string[] | null {
  if (!permissions || typeof permissions !== 'object') return null;
  const scope = (permissions as { api?: unknown }).api;
  return scope && typeof scope === 'object' ? Object.keys(scope) : [];
}

function scopeOf(categories: string[]): Record<string, never> {
  return { api: Object.fromEntries(categories.map((c) => [c, {}])) } as unknown as Record<string, never>;
}

/** API keys (scoped, with the permission editor) and SSH keys. */
export function KeysPage() {
  return (
    <Stack>
      <Title order={1} size="h2">
        Keys
      </Title>
      <ApiKeys />
      <SshKeys />
    </Stack>
  );
}

function ApiKeys() {
  const queries = useQueryClient();
  const keys = useQuery({ queryKey: ['apikeys'], queryFn: () => ok(api.GET('/api/v0/auth/apikeys')) });
  const [name, setName] = useState('');
  const [full, setFull] = useState(false);
  const [granted, setGranted] = useState<string[]>(['user_read', 'instance_read']);
  const [created, setCreated] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: () =>
      ok(
        api.POST('/api/v0/auth/apikeys', {
          body: {
            name: name.trim() || undefined,
            // The document describes permissions as an object without listed properties (any scope).
            ...(full ? {} : { permissions: scopeOf(granted) }),
          },
        }),
      ),
    onSuccess: async (answer) => {
      setCreated(answer.key);
      setName('');
      await queries.invalidateQueries({ queryKey: ['apikeys'] });
    },
  });
  const remove = useMutation({
    mutationFn: (id: number) => ok(api.DELETE('/api/v0/auth/apikeys/{id}', { params: { path: { id } } })),
    onSettled: () => queries.invalidateQueries({ queryKey: ['apikeys'] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  const list = (keys.data?.apikeys ?? []).filter((k) => k.key_type !== 'session');
  return (
    <Paper withBorder p="md" component="section" aria-label="API keys">
      <Title order={2} size="h4" mb="sm">
        API keys
      </Title>
      <ErrorAlert error={keys.error ?? remove.error} mb="sm" />
      <Table.ScrollContainer minWidth={560}>
        <Table aria-label="API keys">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Permissions</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th>
                <span aria-hidden="true" />
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((k) => {
              const scope = grantedOf(k.permissions);
              return (
                <Table.Tr key={k.id}>
                  <Table.Td>{k.name || `key #${k.id}`}</Table.Td>
                  <Table.Td>{scope === null ? 'full access' : scope.join(', ') || 'none'}</Table.Td>
                  <Table.Td>{when(k.created_at)}</Table.Td>
                  <Table.Td>
                    <Button
                      size="xs"
                      color="red"
                      variant="light"
                      aria-label={`Delete API key ${k.name || k.id}`}
                      onClick={() => remove.mutate(k.id)}
                    >
                      Delete
                    </Button>
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <form onSubmit={submit} aria-label="New API key">
        <Stack mt="md">
          <Title order={3} size="h5">
            New API key
          </Title>
          <ErrorAlert error={create.error} />
          {created && (
            <Alert color="green" title="Your new key (shown only now)" role="status">
              <Group wrap="nowrap">
                <Code aria-label="New key value" style={{ wordBreak: 'break-all' }}>
                  {created}
                </Code>
                <CopyButton value={created}>
                  {({ copied, copy }) => (
                    <Button size="xs" variant="default" onClick={copy}>
                      {copied ? 'Copied' : 'Copy'}
                    </Button>
                  )}
                </CopyButton>
              </Group>
            </Alert>
          )}
          <TextInput
            label="Key name"
            value={name}
            maxLength={100}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          <Switch
            label="Full access (every category, like your own login)"
            checked={full}
            onChange={(e) => setFull(e.currentTarget.checked)}
          />
          {!full && (
            <Checkbox.Group
              label="Permissions"
              description="A key reaches only the routes of the categories it holds; it cannot grant more than yours."
              value={granted}
              onChange={setGranted}
            >
              <SimpleGrid cols={{ base: 1, sm: 2 }} mt="xs">
                {CATEGORIES.map((c) => (
                  <Checkbox key={c.name} value={c.name} label={`${c.label} (${c.name})`} />
                ))}
              </SimpleGrid>
            </Checkbox.Group>
          )}
          <Group>
            <Button type="submit" loading={create.isPending}>
              Create key
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}

function SshKeys() {
  const queries = useQueryClient();
  const keys = useQuery({ queryKey: ['ssh'], queryFn: () => ok(api.GET('/api/v0/ssh')) });
  const [value, setValue] = useState('');
  const add = useMutation({
    mutationFn: () => ok(api.POST('/api/v0/ssh', { body: { ssh_key: value.trim() } })),
    onSuccess: async () => {
      setValue('');
      await queries.invalidateQueries({ queryKey: ['ssh'] });
    },
  });
  const remove = useMutation({
    mutationFn: (id: number) => ok(api.DELETE('/api/v0/ssh/{id}', { params: { path: { id } } })),
    onSettled: () => queries.invalidateQueries({ queryKey: ['ssh'] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    add.mutate();
  };
  return (
    <Paper withBorder p="md" component="section" aria-label="SSH keys">
      <Title order={2} size="h4" mb="sm">
        SSH keys
      </Title>
      <ErrorAlert error={keys.error ?? add.error ?? remove.error} mb="sm" />
      <Stack gap="xs" role="list" aria-label="Your SSH keys">
        {(keys.data?.ssh_keys ?? []).map((k) => (
          <Group key={k.id} justify="space-between" wrap="nowrap" role="listitem">
            <Text size="sm" style={{ wordBreak: 'break-all' }}>
              {k.public_key.length > 80
                ? `${k.public_key.slice(0, 40)}…${k.public_key.slice(-30)}`
                : k.public_key}
            </Text>
            <Button
              size="xs"
              color="red"
              variant="light"
              onClick={() => remove.mutate(k.id)}
              aria-label={`Delete SSH key ${k.id}`}
            >
              Delete
            </Button>
          </Group>
        ))}
        {keys.data && keys.data.ssh_keys.length === 0 && <Text size="sm">No SSH keys yet.</Text>}
      </Stack>
      <form onSubmit={submit} aria-label="Add an SSH key">
        <Stack mt="md">
          <Textarea
            label="Public key"
            description="One OpenSSH line, e.g. ssh-ed25519 AAAA… you@laptop; new instances get it in authorized_keys."
            required
            autosize
            minRows={2}
            value={value}
            onChange={(e) => setValue(e.currentTarget.value)}
          />
          <Group>
            <Button type="submit" loading={add.isPending}>
              Add SSH key
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}
