import {
  Badge,
  Button,
  Card,
  Group,
  Modal,
  NumberInput,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useMemo, useState } from 'react';
import { ErrorAlert } from '../ui';
import { api, ok, type Schemas } from '../api/client';
import { amount, gigabytes, percent, perHour, when } from '../format';

type Machine = Schemas['Machine'];
type Window = Schemas['MaintenanceWindow'];

const CATEGORIES = ['power', 'internet', 'disk', 'gpu', 'software', 'other'];
const POLL_MS = 10_000;

/**
 * The host's side: each machine with its listing (price per GPU, min bid, end date), the offers it makes
 * now, its maintenance windows and what it has earned; list or reprice, unlist, schedule or cancel
 * maintenance.
 */
export function HostPage() {
  const machines = useQuery({
    queryKey: ['host', 'machines'],
    queryFn: () => ok(api.GET('/api/v0/machines')),
    refetchInterval: POLL_MS,
  });
  const ids = useMemo(
    () => (machines.data?.machines ?? []).map((m) => m.machine_id ?? m.id),
    [machines.data],
  );
  const windows = useQuery({
    queryKey: ['host', 'maintenances'],
    queryFn: () => ok(api.GET('/api/v0/machines/maintenances')),
    refetchInterval: POLL_MS,
  });
  const earnings = useQuery({
    queryKey: ['host', 'earnings'],
    queryFn: () => ok(api.GET('/api/v0/users/me/machine-earnings')),
    refetchInterval: POLL_MS,
  });
  const offers = useQuery({
    queryKey: ['host', 'offers', ids],
    queryFn: () =>
      ok(
        api.POST('/api/v0/bundles', {
          body: {
            machine_id: { in: ids },
            order: [
              ['machine_id', 'asc'],
              ['num_gpus', 'asc'],
            ],
            limit: 1000,
          } as Record<string, unknown>,
        }),
      ),
    enabled: ids.length > 0,
    refetchInterval: POLL_MS,
  });
  const [pricing, setPricing] = useState<Machine | null>(null);
  const [scheduling, setScheduling] = useState<Machine | null>(null);

  const total = Object.values(earnings.data?.machines ?? {}).reduce((a, b) => a + b, 0);
  const error = machines.error ?? windows.error ?? earnings.error ?? offers.error;
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Host
        </Title>
        <Text>
          Earned in all: <strong aria-label="Total earnings">{amount(total)}</strong>
        </Text>
      </Group>
      <ErrorAlert error={error} title="Something failed" />
      {machines.data && machines.data.machines.length === 0 && (
        <Text>
          No machines yet. Run the host agent on a GPU host with your API key (README, Running a GPU host).
        </Text>
      )}
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        {(machines.data?.machines ?? []).map((m) => {
          const id = m.machine_id ?? m.id;
          return (
            <MachineCard
              key={id}
              machine={m}
              offers={(offers.data?.offers ?? []).filter((o) => o.machine_id === id)}
              windows={(windows.data ?? []).filter((w) => w.machine_id === id)}
              earned={earnings.data?.machines[String(id)] ?? 0}
              onPrice={() => setPricing(m)}
              onSchedule={() => setScheduling(m)}
            />
          );
        })}
      </SimpleGrid>
      {(earnings.data?.earnings.length ?? 0) > 0 && (
        <Stack gap="xs" component="section" aria-label="Recent earnings">
          <Title order={2} size="h4">
            Recent earnings
          </Title>
          <Table.ScrollContainer minWidth={480}>
            <Table aria-label="Earnings">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>When</Table.Th>
                  <Table.Th>Machine</Table.Th>
                  <Table.Th>Instance</Table.Th>
                  <Table.Th>Amount</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {[...(earnings.data?.earnings ?? [])]
                  .sort((a, b) => b.timestamp - a.timestamp)
                  .slice(0, 20)
                  .map((e, i) => (
                    <Table.Tr key={`${e.timestamp}-${i}`}>
                      <Table.Td>{when(e.timestamp)}</Table.Td>
                      <Table.Td>{e.machine_id ?? '–'}</Table.Td>
                      <Table.Td>{e.instance_id ?? '–'}</Table.Td>
                      <Table.Td>{amount(e.amount)}</Table.Td>
                    </Table.Tr>
                  ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </Stack>
      )}
      <Modal
        opened={pricing !== null}
        onClose={() => setPricing(null)}
        title={`List machine #${pricing?.id ?? ''}`}
      >
        {pricing && <ListForm key={pricing.id} machine={pricing} onDone={() => setPricing(null)} />}
      </Modal>
      <Modal
        opened={scheduling !== null}
        onClose={() => setScheduling(null)}
        title={`Schedule maintenance of machine #${scheduling?.id ?? ''}`}
      >
        {scheduling && <MaintenanceForm machine={scheduling} onDone={() => setScheduling(null)} />}
      </Modal>
    </Stack>
  );
}

function MachineCard(props: {
  machine: Machine;
  offers: Schemas['Offer'][];
  windows: Window[];
  earned: number;
  onPrice: () => void;
  onSchedule: () => void;
}) {
  const { machine: m, offers, windows, earned } = props;
  const id = m.machine_id ?? m.id;
  const queries = useQueryClient();
  const act = useMutation({
    mutationFn: (what: 'unlist' | 'cancel') =>
      what === 'unlist'
        ? ok(api.DELETE('/api/v0/machines/{id}/asks', { params: { path: { id } } }))
        : ok(api.PUT('/api/v0/machines/{id}/cancel_maint', { params: { path: { id } }, body: {} })),
    onSettled: () => queries.invalidateQueries({ queryKey: ['host'] }),
  });
  return (
    <Card withBorder component="article" aria-label={`Machine ${id}`}>
      <Group justify="space-between" mb="xs">
        <Text fw={700}>
          #{id} {m.hostname ? `· ${m.hostname}` : ''}
        </Text>
        <Group gap="xs">
          <Badge color={m.verification === 'verified' ? 'green' : 'gray'} variant="light">
            {m.verification}
          </Badge>
          <Badge color={m.listed ? 'blue' : 'gray'}>{m.listed ? 'listed' : 'not listed'}</Badge>
        </Group>
      </Group>
      <Text size="sm">
        {m.num_gpus}× {m.gpu_name} · {gigabytes(m.gpu_ram)} per GPU · reliability {percent(m.reliability2)}
      </Text>
      <Text size="sm">
        Price per GPU: <strong aria-label="Price per GPU">{perHour(m.listed_gpu_cost)}</strong> · min bid{' '}
        {perHour(m.min_bid_price)} · listed until {when(m.end_date)}
      </Text>
      <Text size="sm">
        Earned: <strong aria-label="Earned">{amount(earned)}</strong>
      </Text>
      <ErrorAlert error={act.error} mt="xs" />
      <Text size="sm" fw={500} mt="sm">
        Offers now
      </Text>
      {offers.length === 0 ? (
        <Text size="sm" c="dimmed">
          None (not listed, or every GPU rented).
        </Text>
      ) : (
        <Table aria-label={`Offers of machine ${id}`} withRowBorders={false}>
          <Table.Tbody>
            {offers.map((o) => (
              <Table.Tr key={o.id}>
                <Table.Td>#{o.id}</Table.Td>
                <Table.Td>
                  {o.num_gpus}× {o.gpu_name}
                </Table.Td>
                <Table.Td>{perHour(o.dph_total)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Text size="sm" fw={500} mt="sm">
        Maintenance
      </Text>
      {windows.length === 0 ? (
        <Text size="sm" c="dimmed">
          None scheduled.
        </Text>
      ) : (
        <Stack gap={4} role="list" aria-label={`Maintenance of machine ${id}`}>
          {windows.map((w) => (
            <Text size="sm" key={w.window_id} role="listitem">
              {when(w.start_time)} to {when(w.end_time)} ({w.duration_hours} h, {w.maintenance_category})
            </Text>
          ))}
        </Stack>
      )}
      <Group mt="sm" gap="xs">
        <Button size="xs" onClick={props.onPrice}>
          {m.listed ? 'Change price' : 'List'}
        </Button>
        {m.listed && (
          <Button size="xs" variant="default" loading={act.isPending} onClick={() => act.mutate('unlist')}>
            Unlist
          </Button>
        )}
        <Button size="xs" variant="default" onClick={props.onSchedule}>
          Schedule maintenance
        </Button>
        {windows.length > 0 && (
          <Button
            size="xs"
            variant="light"
            color="red"
            loading={act.isPending}
            onClick={() => act.mutate('cancel')}
          >
            Cancel maintenance
          </Button>
        )}
      </Group>
    </Card>
  );
}

function ListForm({ machine, onDone }: { machine: Machine; onDone: () => void }) {
  const queries = useQueryClient();
  const [price, setPrice] = useState<number | string>(machine.listed_gpu_cost ?? 0.4);
  const [disk, setDisk] = useState<number | string>(0.1);
  const [minBid, setMinBid] = useState<number | string>(machine.min_bid_price ?? '');
  const [days, setDays] = useState<number | string>(30);
  const list = useMutation({
    mutationFn: () =>
      ok(
        api.PUT('/api/v0/machines/create_asks', {
          body: {
            machine: machine.machine_id ?? machine.id,
            price_gpu: Number(price),
            price_disk: Number(disk),
            price_min_bid: minBid === '' ? null : Number(minBid),
            end_date: Math.floor(Date.now() / 1000) + Number(days) * 86_400,
          },
        }),
      ),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['host'] });
      onDone();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    list.mutate();
  };
  return (
    <form onSubmit={submit}>
      <Stack>
        <ErrorAlert error={list.error} />
        <NumberInput
          label="Price per GPU per hour, $"
          min={0}
          step={0.05}
          decimalScale={4}
          required
          value={price}
          onChange={setPrice}
        />
        <NumberInput
          label="Disk price, $ per GB per month"
          min={0}
          step={0.01}
          decimalScale={4}
          value={disk}
          onChange={setDisk}
        />
        <NumberInput
          label="Minimum bid per GPU per hour, $"
          min={0}
          step={0.05}
          decimalScale={4}
          value={minBid}
          onChange={setMinBid}
        />
        <NumberInput label="Listed for, days" min={1} max={365} required value={days} onChange={setDays} />
        <Group justify="flex-end">
          <Button type="submit" loading={list.isPending}>
            Save listing
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** A datetime-local value (the browser's own picker, keyboard-usable) for a moment in local time. */
function localInput(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function MaintenanceForm({ machine, onDone }: { machine: Machine; onDone: () => void }) {
  const queries = useQueryClient();
  const [start, setStart] = useState(() => localInput(new Date(Date.now() + 86_400_000)));
  const [hours, setHours] = useState<number | string>(2);
  const [category, setCategory] = useState<string | null>('software');
  const schedule = useMutation({
    mutationFn: () =>
      ok(
        api.PUT('/api/v0/machines/{id}/dnotify', {
          params: { path: { id: machine.machine_id ?? machine.id } },
          body: {
            sdate: Math.floor(new Date(start).getTime() / 1000),
            duration: Number(hours),
            maintenance_category: category ?? 'other',
          },
        }),
      ),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['host'] });
      onDone();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    schedule.mutate();
  };
  return (
    <form onSubmit={submit}>
      <Stack>
        <ErrorAlert error={schedule.error} />
        <TextInput
          type="datetime-local"
          label="Starts"
          required
          value={start}
          onChange={(e) => setStart(e.currentTarget.value)}
        />
        <NumberInput
          label="Duration, hours"
          min={0.5}
          max={720}
          step={0.5}
          required
          value={hours}
          onChange={setHours}
        />
        <Select
          label="Category"
          allowDeselect={false}
          data={CATEGORIES}
          value={category}
          onChange={setCategory}
        />
        <Text size="xs" c="dimmed">
          Renters see the window on their instances; offers of this machine that would overlap it are not
          rented.
        </Text>
        <Group justify="flex-end">
          <Button type="submit" loading={schedule.isPending}>
            Schedule
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
