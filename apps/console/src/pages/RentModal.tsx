import {
  ActionIcon,
  Button,
  Group,
  Modal,
  NumberInput,
  Select,
  Stack,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { ErrorAlert } from '../ui';
import { api, type InstanceCreation, ok, type Offer } from '../api/client';
import { perHour } from '../format';

type Runtype = NonNullable<InstanceCreation['runtype']>;

const RUNTYPES: { value: Runtype; label: string }[] = [
  { value: 'ssh_direct', label: 'SSH (direct)' },
  { value: 'jupyter_direct', label: 'Jupyter (direct)' },
  { value: 'args', label: "The image's own entrypoint (args)" },
];

interface EnvRow {
  name: string;
  value: string;
}

/**
 * Renting an offer: image (or a template), disk, how it runs, environment variables and ports
 * (`-p h:c` keys of env, as the vastai CLI sends them), label. PUT /api/v0/asks/{offer}/.
 */
export function RentModal({ offer, onClose }: { offer: Offer | null; onClose: () => void }) {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const [template, setTemplate] = useState<string | null>(null);
  const [image, setImage] = useState('busybox');
  const [disk, setDisk] = useState<number | string>(10);
  const [runtype, setRuntype] = useState<Runtype>('ssh_direct');
  const [label, setLabel] = useState('');
  const [onstart, setOnstart] = useState('');
  const [env, setEnv] = useState<EnvRow[]>([]);
  const [ports, setPorts] = useState('');

  const templates = useQuery({
    queryKey: ['templates'],
    queryFn: () => ok(api.GET('/api/v0/template')),
    enabled: offer !== null,
  });

  const rent = useMutation({
    mutationFn: (o: Offer) => {
      const body: InstanceCreation = { disk: Number(disk) || 10, runtype, label };
      if (template) body.template_hash_id = template;
      if (image.trim()) body.image = image.trim();
      if (onstart.trim()) body.onstart = onstart;
      const vars: Record<string, string> = {};
      for (const row of env) if (row.name.trim()) vars[row.name.trim()] = row.value;
      for (const p of ports.split(/[\s,]+/).filter(Boolean)) {
        const [host, container] = p.includes(':') ? p.split(':') : [p, p];
        vars[`-p ${host}:${container}`] = '1';
      }
      if (Object.keys(vars).length > 0) body.env = vars;
      return ok(api.PUT('/api/v0/asks/{offerId}', { params: { path: { offerId: o.id } }, body }));
    },
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['instances'] });
      await queries.invalidateQueries({ queryKey: ['offers'] });
      onClose();
      navigate('/instances');
    },
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (offer) rent.mutate(offer);
  };

  return (
    <Modal
      opened={offer !== null}
      onClose={() => {
        rent.reset();
        onClose();
      }}
      title={offer ? `Rent ${offer.num_gpus}× ${offer.gpu_name} (offer #${offer.id})` : 'Rent'}
      size="lg"
    >
      {offer && (
        <form onSubmit={submit} aria-label="Rent this offer">
          <Stack>
            <Text>
              Price: <strong>{perHour(offer.dph_total)}</strong> while running; storage is billed while
              stopped.
            </Text>
            <ErrorAlert error={rent.error} title="The rental failed" />
            <Select
              label="Template"
              placeholder="None: set the image below"
              clearable
              data={(templates.data?.templates ?? []).map((t) => ({
                value: t.hash_id,
                label: `${t.name} (${t.image})`,
              }))}
              value={template}
              onChange={(v) => {
                setTemplate(v);
                const t = templates.data?.templates.find((x) => x.hash_id === v);
                if (t) setImage('');
              }}
            />
            <TextInput
              label="Image"
              description={template ? "Empty: the template's image" : 'A Docker image, e.g. pytorch/pytorch'}
              required={!template}
              value={image}
              onChange={(e) => setImage(e.currentTarget.value)}
            />
            <Group grow align="flex-start">
              <NumberInput label="Disk, GB" min={1} max={4096} value={disk} onChange={setDisk} />
              <Select
                label="Run type"
                allowDeselect={false}
                data={RUNTYPES}
                value={runtype}
                onChange={(v) => setRuntype((v as Runtype | null) ?? 'ssh_direct')}
              />
            </Group>
            <TextInput
              label="Label"
              maxLength={100}
              value={label}
              onChange={(e) => setLabel(e.currentTarget.value)}
            />
            <TextInput
              label="Ports"
              description="Container ports to open, e.g. 8080 or 8000:80, separated by spaces"
              value={ports}
              onChange={(e) => setPorts(e.currentTarget.value)}
            />
            <Stack gap="xs" role="group" aria-label="Environment variables">
              <Text size="sm" fw={500}>
                Environment variables
              </Text>
              {env.map((row, i) => (
                <Group key={i} wrap="nowrap" align="flex-end">
                  <TextInput
                    label={`Variable ${i + 1} name`}
                    value={row.name}
                    onChange={(e) => {
                      const name = e.currentTarget.value;
                      setEnv((rows) => rows.map((r, j) => (j === i ? { ...r, name } : r)));
                    }}
                  />
                  <TextInput
                    label={`Variable ${i + 1} value`}
                    value={row.value}
                    onChange={(e) => {
                      const value = e.currentTarget.value;
                      setEnv((rows) => rows.map((r, j) => (j === i ? { ...r, value } : r)));
                    }}
                  />
                  <ActionIcon
                    variant="default"
                    size="lg"
                    aria-label={`Remove variable ${i + 1}`}
                    onClick={() => setEnv((rows) => rows.filter((_, j) => j !== i))}
                  >
                    ×
                  </ActionIcon>
                </Group>
              ))}
              <Button
                variant="light"
                size="xs"
                onClick={() => setEnv((rows) => [...rows, { name: '', value: '' }])}
              >
                Add a variable
              </Button>
            </Stack>
            <Textarea
              label="On-start script"
              maxLength={4048}
              autosize
              minRows={2}
              value={onstart}
              onChange={(e) => setOnstart(e.currentTarget.value)}
            />
            <Group justify="flex-end">
              <Button type="submit" loading={rent.isPending}>
                Rent for {perHour(offer.dph_total)}
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
