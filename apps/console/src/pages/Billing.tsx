import { Group, Paper, Stack, Table, Tabs, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorAlert } from '../ui';
import { api, ok } from '../api/client';
import { useCurrentUser } from '../auth';
import { amount, dollars, when } from '../format';

/** Balance, charges (compute and storage per period) and invoices (credit and transfers), newest first. */
export function BillingPage() {
  const user = useCurrentUser();
  const [view, setView] = useState<'charges' | 'invoices'>('charges');
  const page = useQuery({
    queryKey: ['billing', view],
    queryFn: () =>
      view === 'charges'
        ? ok(api.GET('/api/v0/charges', { params: { query: { latest_first: true, limit: 100 } } }))
        : ok(api.GET('/api/v1/invoices', { params: { query: { latest_first: true, limit: 100 } } })),
    refetchInterval: 15_000,
  });
  return (
    <Stack>
      <Title order={1} size="h2">
        Billing
      </Title>
      <Paper withBorder p="md">
        <Group>
          <Text>
            Balance: <strong aria-label="Account balance">{dollars(user.data?.credit)}</strong>
          </Text>
        </Group>
      </Paper>
      <Tabs value={view} onChange={(v) => setView(v === 'invoices' ? 'invoices' : 'charges')}>
        <Tabs.List aria-label="Billing history">
          <Tabs.Tab value="charges">Charges</Tabs.Tab>
          <Tabs.Tab value="invoices">Invoices</Tabs.Tab>
        </Tabs.List>
      </Tabs>
      <ErrorAlert error={page.error} />
      {page.data && (
        <Text size="sm" role="status">
          {page.data.count} of {page.data.total} {view}
        </Text>
      )}
      <Table.ScrollContainer minWidth={560}>
        <Table aria-label={view === 'charges' ? 'Charges' : 'Invoices'}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>From</Table.Th>
              <Table.Th>To</Table.Th>
              <Table.Th>What</Table.Th>
              <Table.Th>Amount</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(page.data?.results ?? []).map((item) => (
              <Table.Tr key={`${item.type}-${item.id}`}>
                <Table.Td>{when(item.start)}</Table.Td>
                <Table.Td>{when(item.end)}</Table.Td>
                <Table.Td>{item.description}</Table.Td>
                <Table.Td>{amount(item.amount)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Stack>
  );
}
