import { AppShell, Burger, Button, Group, NavLink, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { NavLink as RouterLink, Outlet } from 'react-router';
import { useAuth } from './auth';
import { dollars } from './format';

const SECTIONS = [
  { to: '/offers', label: 'Search offers' },
  { to: '/instances', label: 'Instances' },
  { to: '/templates', label: 'Templates' },
  { to: '/volumes', label: 'Volumes' },
  { to: '/keys', label: 'Keys' },
  { to: '/billing', label: 'Billing' },
  { to: '/audit', label: 'Audit log' },
  { to: '/security', label: 'Security (2FA)' },
  { to: '/host', label: 'Host' },
];

/** The signed-in frame: header with the account and balance, navigation (a drawer on phones), the page. */
export function Layout() {
  const { user, signOut } = useAuth();
  const [opened, { toggle, close }] = useDisclosure();
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group wrap="nowrap" gap="sm">
            <Burger
              opened={opened}
              onClick={toggle}
              hiddenFrom="sm"
              size="sm"
              aria-label={opened ? 'Close navigation' : 'Open navigation'}
            />
            <Title order={2} size="h4">
              Rigmarket
            </Title>
          </Group>
          <Group wrap="nowrap" gap="sm">
            {user && (
              <Text size="sm" visibleFrom="xs" aria-label="Account">
                {user.username ?? user.email}
              </Text>
            )}
            {user && (
              <Text size="sm" fw={600} aria-label="Balance">
                {dollars(user.credit)}
              </Text>
            )}
            <Button variant="default" size="xs" onClick={() => void signOut()}>
              Log out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Sections">
        {SECTIONS.map((s) => (
          <NavLink key={s.to} component={RouterLink} to={s.to} label={s.label} onClick={close} />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        <Outlet />
      </AppShell.Main>
    </AppShell>
  );
}
