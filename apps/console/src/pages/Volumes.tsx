import { Button, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ErrorAlert } from '../ui';
import { api, ok } from '../api/client';
import { when } from '../format';

/** The caller's volumes (created with an instance that asked for one): size, machine, status, instances; delete. */
export function VolumesPage() {
  const queries = useQueryClient();
  const volumes = useQuery({
    queryKey: ['volumes'],
    queryFn: () => ok(api.GET('/api/v0/volumes')),
    refetchInterval: 10_000,
  });
  const remove = useMutation({
    mutationFn: (id: number) => ok(api.DELETE('/api/v0/volumes', { params: { query: { id } } })),
    onSettled: () => queries.invalidateQueries({ queryKey: ['volumes'] }),
  });
  const list = volumes.data?.volumes ?? [];
  return (
    <Stack>
      <Title order={1} size="h2">
        Volumes
      </Title>
      <ErrorAlert error={volumes.error ?? remove.error} />
      {volumes.data && list.length === 0 && <Text>No volumes. Rent with a volume to create one.</Text>}
      {list.length > 0 && (
        <Table.ScrollContainer minWidth={560}>
          <Table aria-label="Volumes">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Volume</Table.Th>
                <Table.Th>Size</Table.Th>
                <Table.Th>Machine</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Instances</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th>
                  <span aria-hidden="true" />
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((v) => (
                <Table.Tr key={v.id}>
                  <Table.Td>{v.name ?? `#${v.id}`}</Table.Td>
                  <Table.Td>{v.size} GB</Table.Td>
                  <Table.Td>#{v.machine_id}</Table.Td>
                  <Table.Td>{v.status}</Table.Td>
                  <Table.Td>{(v.instances ?? []).join(', ') || '–'}</Table.Td>
                  <Table.Td>{when(v.start_date)}</Table.Td>
                  <Table.Td>
                    <Button
                      size="xs"
                      color="red"
                      variant="light"
                      aria-label={`Delete volume ${v.id}`}
                      onClick={() => remove.mutate(v.id)}
                    >
                      Delete
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
    </Stack>
  );
}
