import { Badge, Button, Card, Group, Modal, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useMemo, useState } from 'react';
import { Link } from 'react-router';
import { ErrorAlert } from '../ui';
import { api, type Instance, ok } from '../api/client';
import { amount, perHour, when } from '../format';
import { LogsDrawer } from './LogsDrawer';

/** How often the list is read again while the page is open (the API asks clients to poll, not push). */
const POLL_MS = 3_000;

const STATE_COLOURS: Record<string, string> = {
  running: 'green',
  loading: 'blue',
  stopped: 'gray',
  exited: 'red',
  unknown: 'orange',
  offline: 'orange',
};

type Action = 'stop' | 'start' | 'reboot' | 'destroy';

/** The renter's instances, read again every few seconds: state, status message, cost so far, actions. */
export function InstancesPage() {
  const queries = useQueryClient();
  const [logsOf, setLogsOf] = useState<Instance | null>(null);
  const [labelling, setLabelling] = useState<Instance | null>(null);
  const [destroying, setDestroying] = useState<Instance | null>(null);

  const instances = useQuery({
    queryKey: ['instances'],
    queryFn: () => ok(api.GET('/api/v0/instances')),
    refetchInterval: POLL_MS,
  });
  // What each instance has cost so far: the ledger's charges (compute and storage) that name it.
  const ledger = useQuery({
    queryKey: ['instances', 'charges'],
    queryFn: () => ok(api.GET('/api/v0/users/me/invoices')),
    refetchInterval: 15_000,
  });
  const costs = useMemo(() => {
    const sums = new Map<number, number>();
    for (const e of ledger.data?.invoices ?? [])
      if (e.instance_id !== null && e.type !== 'credit')
        sums.set(e.instance_id, (sums.get(e.instance_id) ?? 0) + Math.abs(e.amount));
    return sums;
  }, [ledger.data]);

  const act = useMutation({
    mutationFn: async ({ id, action }: { id: number; action: Action }) => {
      const path = { params: { path: { id } } };
      if (action === 'reboot') return ok(api.PUT('/api/v0/instances/reboot/{id}', path));
      if (action === 'destroy') return ok(api.DELETE('/api/v0/instances/{id}', path));
      const state = action === 'stop' ? 'stopped' : 'running';
      return ok(api.PUT('/api/v0/instances/{id}', { ...path, body: { state } }));
    },
    onSettled: () => queries.invalidateQueries({ queryKey: ['instances'] }),
  });

  const list = instances.data?.instances ?? [];
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Instances
        </Title>
        <Button component={Link} to="/offers" variant="light">
          Rent another
        </Button>
      </Group>
      <ErrorAlert error={instances.error ?? act.error} title="Something failed" />
      {instances.data && list.length === 0 && <Text>No instances yet. Rent one from the offers.</Text>}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        {list.map((i) => {
          const state = i.actual_status ?? 'provisioning';
          const actions = new Set(i.actions ?? []);
          const busy = act.isPending && act.variables?.id === i.id;
          return (
            <Card key={i.id} withBorder component="article" aria-label={`Instance ${i.id}`}>
              <Group justify="space-between" mb="xs">
                <Text fw={700}>
                  #{i.id} {i.label ? `· ${i.label}` : ''}
                </Text>
                <Badge color={STATE_COLOURS[state] ?? 'blue'} aria-label={`State ${state}`}>
                  {state}
                </Badge>
              </Group>
              <Text size="sm">
                {i.num_gpus}× {i.gpu_name} · {i.image ?? '–'} · {perHour(i.dph_total)}
              </Text>
              <Text size="sm" c="dimmed">
                Intended: {i.intended_status ?? '–'} · started {when(i.start_date)}
                {i.ssh_host && i.ssh_port ? ` · ssh -p ${i.ssh_port} root@${i.ssh_host}` : ''}
              </Text>
              <Text size="sm" aria-label="Status message">
                {i.status_msg ?? ' '}
              </Text>
              <Text size="sm">
                Cost so far: <strong aria-label="Cost so far">{amount(costs.get(i.id) ?? 0)}</strong>
              </Text>
              <Group mt="sm" gap="xs">
                {actions.has('stop') && (
                  <Button
                    size="xs"
                    variant="default"
                    loading={busy}
                    onClick={() => act.mutate({ id: i.id, action: 'stop' })}
                  >
                    Stop
                  </Button>
                )}
                {actions.has('start') && (
                  <Button
                    size="xs"
                    variant="default"
                    loading={busy}
                    onClick={() => act.mutate({ id: i.id, action: 'start' })}
                  >
                    Start
                  </Button>
                )}
                {state === 'running' && (
                  <Button
                    size="xs"
                    variant="default"
                    loading={busy}
                    onClick={() => act.mutate({ id: i.id, action: 'reboot' })}
                  >
                    Reboot
                  </Button>
                )}
                <Button size="xs" variant="default" onClick={() => setLabelling(i)}>
                  Label
                </Button>
                <Button size="xs" variant="default" onClick={() => setLogsOf(i)}>
                  Logs
                </Button>
                <Button size="xs" color="red" variant="light" onClick={() => setDestroying(i)}>
                  Destroy
                </Button>
              </Group>
            </Card>
          );
        })}
      </SimpleGrid>
      <LogsDrawer instance={logsOf} onClose={() => setLogsOf(null)} />
      <LabelModal instance={labelling} onClose={() => setLabelling(null)} />
      <Modal opened={destroying !== null} onClose={() => setDestroying(null)} title="Destroy this instance?">
        <Stack>
          <Text>Instance #{destroying?.id} and its disk are deleted for good; billing for it stops.</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setDestroying(null)}>
              Keep it
            </Button>
            <Button
              color="red"
              onClick={() => {
                if (destroying) act.mutate({ id: destroying.id, action: 'destroy' });
                setDestroying(null);
              }}
            >
              Destroy instance #{destroying?.id}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}

function LabelModal({ instance, onClose }: { instance: Instance | null; onClose: () => void }) {
  return (
    <Modal opened={instance !== null} onClose={onClose} title={`Label instance #${instance?.id ?? ''}`}>
      {instance && <LabelForm key={instance.id} instance={instance} onDone={onClose} />}
    </Modal>
  );
}

function LabelForm({ instance, onDone }: { instance: Instance; onDone: () => void }) {
  const queries = useQueryClient();
  const [label, setLabel] = useState(instance.label ?? '');
  const save = useMutation({
    mutationFn: () =>
      ok(api.PUT('/api/v0/instances/{id}', { params: { path: { id: instance.id } }, body: { label } })),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['instances'] });
      onDone();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <form onSubmit={submit}>
      <Stack>
        <ErrorAlert error={save.error} />
        <TextInput
          label="Label"
          data-autofocus
          maxLength={100}
          value={label}
          onChange={(e) => setLabel(e.currentTarget.value)}
        />
        <Group justify="flex-end">
          <Button type="submit" loading={save.isPending}>
            Save label
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
