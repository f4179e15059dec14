import {
  Badge,
  Button,
  Checkbox,
  Group,
  NumberInput,
  Paper,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
  VisuallyHidden,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorAlert } from '../ui';
import { api, ok, type Offer } from '../api/client';
import { gigabytes, percent, perHour } from '../format';
import { RentModal } from './RentModal';

/** What the form holds; empty means no filter. */
interface Filters {
  gpuName: string | null;
  minGpus: number | string;
  minGpuRamGb: number | string;
  maxPrice: number | string;
  minReliability: number | string;
  verifiedOnly: boolean;
  location: string;
  sort: string;
}

const SORTS: { value: string; label: string; order: [string, 'asc' | 'desc'][] }[] = [
  { value: 'price', label: 'Price per hour, lowest first', order: [['dph_total', 'asc']] },
  { value: 'price-desc', label: 'Price per hour, highest first', order: [['dph_total', 'desc']] },
  { value: 'reliability', label: 'Reliability, highest first', order: [['reliability', 'desc']] },
  { value: 'gpus', label: 'GPU count, most first', order: [['num_gpus', 'desc']] },
  { value: 'gpu_ram', label: 'GPU RAM, most first', order: [['gpu_ram', 'desc']] },
  { value: 'score', label: 'Best value (score)', order: [['score', 'desc']] },
];

const INITIAL: Filters = {
  gpuName: null,
  minGpus: '',
  minGpuRamGb: '',
  maxPrice: '',
  minReliability: '',
  verifiedOnly: false,
  location: '',
  sort: 'price',
};

const given = (v: number | string): v is number => typeof v === 'number' && Number.isFinite(v);

/** The offer search's body in the filter language (docs/marketplace.md): `{field: {op: value}}`, order, limit. */
function searchBody(f: Filters): Record<string, unknown> {
  const body: Record<string, unknown> = {
    rentable: { eq: true },
    type: 'on-demand',
    limit: 200,
    order: SORTS.find((s) => s.value === f.sort)?.order ?? SORTS[0]!.order,
  };
  if (f.gpuName) body.gpu_name = { eq: f.gpuName };
  if (given(f.minGpus)) body.num_gpus = { gte: f.minGpus };
  if (given(f.minGpuRamGb)) body.gpu_ram = { gte: f.minGpuRamGb * 1024 };
  if (given(f.maxPrice)) body.dph_total = { lte: f.maxPrice };
  if (given(f.minReliability)) body.reliability = { gte: f.minReliability / 100 };
  if (f.verifiedOnly) body.verified = { eq: true };
  const places = f.location
    .split(',')
    .map((p) => p.trim().toUpperCase())
    .filter(Boolean);
  if (places.length > 0) body.geolocation = { in: places };
  return body;
}

export function OffersPage() {
  const [form, setForm] = useState<Filters>(INITIAL);
  const [filters, setFilters] = useState<Filters>(INITIAL);
  const [renting, setRenting] = useState<Offer | null>(null);
  const set = <K extends keyof Filters>(k: K, v: Filters[K]) => setForm((f) => ({ ...f, [k]: v }));

  const names = useQuery({
    queryKey: ['gpu_names'],
    queryFn: () => ok(api.GET('/api/v0/gpu_names/unique')),
  });
  const offers = useQuery({
    queryKey: ['offers', filters],
    queryFn: () => ok(api.POST('/api/v0/bundles', { body: searchBody(filters) })),
  });

  return (
    <Stack>
      <Title order={1} size="h2">
        Search offers
      </Title>
      <Paper withBorder p="md" component="section" aria-label="Filters">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setFilters(form);
          }}
        >
          <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }}>
            <Select
              label="GPU model"
              placeholder="Any"
              clearable
              searchable
              data={names.data?.gpu_names ?? []}
              value={form.gpuName}
              onChange={(v) => set('gpuName', v)}
            />
            <NumberInput
              label="GPUs (at least)"
              min={1}
              max={64}
              value={form.minGpus}
              onChange={(v) => set('minGpus', v)}
            />
            <NumberInput
              label="GPU RAM per GPU, GB (at least)"
              min={1}
              max={1024}
              value={form.minGpuRamGb}
              onChange={(v) => set('minGpuRamGb', v)}
            />
            <NumberInput
              label="Price per hour, $ (at most)"
              min={0}
              step={0.1}
              decimalScale={3}
              value={form.maxPrice}
              onChange={(v) => set('maxPrice', v)}
            />
            <NumberInput
              label="Reliability, % (at least)"
              min={0}
              max={100}
              value={form.minReliability}
              onChange={(v) => set('minReliability', v)}
            />
            <TextInput
              label="Location (country codes)"
              placeholder="e.g. US, DE"
              value={form.location}
              onChange={(e) => set('location', e.currentTarget.value)}
            />
            <Select
              label="Sort by"
              allowDeselect={false}
              data={SORTS.map(({ value, label }) => ({ value, label }))}
              value={form.sort}
              onChange={(v) => set('sort', v ?? 'price')}
            />
            <Checkbox
              mt={{ base: 0, md: 32 }}
              label="Verified hosts only"
              checked={form.verifiedOnly}
              onChange={(e) => set('verifiedOnly', e.currentTarget.checked)}
            />
          </SimpleGrid>
          <Group mt="md">
            <Button type="submit">Search</Button>
            <Button
              variant="default"
              onClick={() => {
                setForm(INITIAL);
                setFilters(INITIAL);
              }}
            >
              Reset filters
            </Button>
          </Group>
        </form>
      </Paper>
      <ErrorAlert error={offers.error} title="Search failed" />
      {offers.data && (
        <Text size="sm" role="status">
          {offers.data.offers.length} offers
        </Text>
      )}
      <Table.ScrollContainer minWidth={720}>
        <Table striped highlightOnHover aria-label="Offers">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>GPUs</Table.Th>
              <Table.Th>GPU RAM</Table.Th>
              <Table.Th>Price</Table.Th>
              <Table.Th>Reliability</Table.Th>
              <Table.Th>Location</Table.Th>
              <Table.Th>Disk</Table.Th>
              <Table.Th>Offer</Table.Th>
              <Table.Th>
                <VisuallyHidden>Rent</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(offers.data?.offers ?? []).map((o) => (
              <Table.Tr key={o.id}>
                <Table.Td>
                  {o.num_gpus}× {o.gpu_name}{' '}
                  {o.verified && (
                    <Badge size="xs" color="green" variant="light">
                      verified
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>{gigabytes(o.gpu_ram)}</Table.Td>
                <Table.Td>
                  <Text fw={700} span>
                    {perHour(o.dph_total)}
                  </Text>
                </Table.Td>
                <Table.Td>{percent(o.reliability)}</Table.Td>
                <Table.Td>{o.geolocation ?? '–'}</Table.Td>
                <Table.Td>{o.disk_space ? `${Math.round(o.disk_space)} GB` : '–'}</Table.Td>
                <Table.Td>#{o.id}</Table.Td>
                <Table.Td>
                  <Button size="xs" onClick={() => setRenting(o)} aria-label={`Rent offer ${o.id}`}>
                    Rent
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <RentModal offer={renting} onClose={() => setRenting(null)} />
    </Stack>
  );
}
