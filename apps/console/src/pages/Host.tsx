import { Stack, Text, Title } from '@mantine/core';

export function HostPage() {
  return (
    <Stack>
      <Title order={1} size="h2">
        Host
      </Title>
      <Text>Machines, offers, maintenance and earnings come here.</Text>
    </Stack>
  );
}
