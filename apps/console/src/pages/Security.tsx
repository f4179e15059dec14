import {
  Alert,
  Badge,
  Button,
  Code,
  Group,
  Image,
  Paper,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import QRCode from 'qrcode';
import { type FormEvent, useEffect, useState } from 'react';
import { ErrorAlert, useAttempt } from '../ui';
import { api, errorText, ok } from '../api/client';
import { when } from '../format';

/**
 * Two-factor authentication (docs/tfa.md): the methods and backup codes left; add an authenticator app
 * (authorize by a mailed code, scan the QR code, confirm a code; the first method turns 2FA on and shows
 * the backup codes once), remove a method (with a code of it or a backup code), new backup codes.
 */
export function SecurityPage() {
  const queries = useQueryClient();
  const status = useQuery({ queryKey: ['tfa'], queryFn: () => ok(api.GET('/api/v0/tfa/status')) });
  const [backupCodes, setBackupCodes] = useState<string[] | null>(null);
  const [adding, setAdding] = useState(false);
  const refresh = () => queries.invalidateQueries({ queryKey: ['tfa'] });
  return (
    <Stack>
      <Title order={1} size="h2">
        Security
      </Title>
      <ErrorAlert error={status.error} />
      <Paper withBorder p="md" component="section" aria-label="Two-factor authentication">
        <Group justify="space-between" mb="sm">
          <Title order={2} size="h4">
            Two-factor authentication
          </Title>
          <Badge color={status.data?.tfa_enabled ? 'green' : 'gray'} aria-label="2FA status">
            {status.data?.tfa_enabled ? 'on' : 'off'}
          </Badge>
        </Group>
        {status.data && (
          <Text size="sm" mb="sm">
            Backup codes left:{' '}
            <strong aria-label="Backup codes left">{status.data.backup_codes_remaining}</strong>
          </Text>
        )}
        {(status.data?.methods.length ?? 0) > 0 && (
          <Table aria-label="2FA methods" mb="sm">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Method</Table.Th>
                <Table.Th>Label</Table.Th>
                <Table.Th>Last used</Table.Th>
                <Table.Th>Remove (needs a code)</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {(status.data?.methods ?? []).map((m) => (
                <Table.Tr key={m.id}>
                  <Table.Td>
                    {m.method === 'totp' ? 'Authenticator app' : `SMS ${m.phone_number ?? ''}`}{' '}
                    {m.is_primary ? '(primary)' : ''}
                  </Table.Td>
                  <Table.Td>{m.label || '–'}</Table.Td>
                  <Table.Td>{when(m.last_used)}</Table.Td>
                  <Table.Td>
                    <RemoveMethod id={m.id} method={m.method} onDone={refresh} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
        {backupCodes && <BackupCodes codes={backupCodes} />}
        {adding ? (
          <AddAuthenticator
            onDone={(codes) => {
              setAdding(false);
              if (codes && codes.length > 0) setBackupCodes(codes);
              void refresh();
            }}
          />
        ) : (
          <Group>
            <Button onClick={() => setAdding(true)}>Add an authenticator app</Button>
            {status.data?.tfa_enabled && <RegenerateCodes onCodes={setBackupCodes} />}
          </Group>
        )}
      </Paper>
    </Stack>
  );
}

function BackupCodes({ codes }: { codes: string[] }) {
  return (
    <Alert color="yellow" title="Your backup codes (shown only now)" role="status" mb="sm">
      <Text size="sm" mb="xs">
        Each works once when your authenticator is not at hand. Keep them somewhere safe.
      </Text>
      <SimpleGrid cols={{ base: 2, sm: 5 }} aria-label="Backup codes" role="list">
        {codes.map((c) => (
          <Code key={c} role="listitem">
            {c}
          </Code>
        ))}
      </SimpleGrid>
    </Alert>
  );
}

/** Step 1 mails a code (the add-method authorization); step 2 shows the QR code and confirms a code. */
function AddAuthenticator({ onDone }: { onDone: (backupCodes: string[] | undefined) => void }) {
  const [authSecret, setAuthSecret] = useState<string | null>(null);
  const [authorized, setAuthorized] = useState(false);
  const [setup, setSetup] = useState<{ secret: string; uri: string } | null>(null);
  const [qr, setQr] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [label, setLabel] = useState('Authenticator app');
  const { busy, error, attempt } = useAttempt();

  useEffect(() => {
    if (!setup) return;
    let live = true;
    void QRCode.toDataURL(setup.uri, { margin: 1, width: 200 }).then((url) => live && setQr(url));
    return () => {
      live = false;
    };
  }, [setup]);

  const start = () =>
    void attempt(async () => {
      const answer = await ok(api.POST('/api/v0/tfa/authorize-new-method', { body: { tfa_method: 'totp' } }));
      setAuthSecret(answer.secret ?? null);
    });

  const authorize = (e: FormEvent) => {
    e.preventDefault();
    void attempt(async () => {
      await ok(
        api.PUT('/api/v0/tfa/authorize-new-method', {
          body: { secret: authSecret ?? '', code: code.trim() },
        }),
      );
      setAuthorized(true);
      setCode('');
      const answer = await ok(api.POST('/api/v0/tfa/totp-setup'));
      setSetup({ secret: answer.secret, uri: answer.provisioning_uri });
    });
  };

  const confirm = (e: FormEvent) => {
    e.preventDefault();
    void attempt(async () => {
      if (!setup) return;
      const answer = await ok(
        api.POST('/api/v0/tfa/confirm-new', {
          body: { tfa_method: 'totp', secret: setup.secret, code: code.trim(), label: label.trim() },
        }),
      );
      onDone(answer.backup_codes);
    });
  };

  return (
    <Stack>
      <ErrorAlert error={error} />
      {!authSecret && !authorized && (
        <Group>
          <Text size="sm">First we send a code to your e-mail to confirm it is you.</Text>
          <Button onClick={start} loading={busy}>
            Send me a code
          </Button>
        </Group>
      )}
      {authSecret && !authorized && (
        <form onSubmit={authorize} aria-label="Authorize a new method">
          <Stack>
            <TextInput
              label="Code from the e-mail"
              autoComplete="one-time-code"
              required
              value={code}
              onChange={(e) => setCode(e.currentTarget.value)}
            />
            <Group>
              <Button type="submit" loading={busy}>
                Continue
              </Button>
            </Group>
          </Stack>
        </form>
      )}
      {setup && (
        <form onSubmit={confirm} aria-label="Confirm the authenticator app">
          <Stack>
            <Text size="sm">Scan this QR code with your authenticator app, or type the secret in it.</Text>
            {qr && <Image src={qr} alt="QR code of the authenticator secret" w={200} h={200} />}
            <Text size="sm">
              Secret: <Code aria-label="Authenticator secret">{setup.secret}</Code>
            </Text>
            <TextInput
              label="Method label"
              maxLength={30}
              value={label}
              onChange={(e) => setLabel(e.currentTarget.value)}
            />
            <TextInput
              label="Code from the app"
              autoComplete="one-time-code"
              inputMode="numeric"
              required
              value={code}
              onChange={(e) => setCode(e.currentTarget.value)}
            />
            <Group>
              <Button type="submit" loading={busy}>
                Turn it on
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Stack>
  );
}

function RemoveMethod({ id, method, onDone }: { id: number; method: string; onDone: () => void }) {
  const [code, setCode] = useState('');
  const remove = useMutation({
    mutationFn: () => {
      const given = code.trim();
      const proof = /^\d{6}$/.test(given)
        ? { tfa_method: method === 'sms' ? ('sms' as const) : ('totp' as const), code: given }
        : { backup_code: given };
      return ok(api.DELETE('/api/v0/tfa', { body: { tfa_method_id: id, ...proof } }));
    },
    onSuccess: onDone,
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    remove.mutate();
  };
  return (
    <form onSubmit={submit}>
      <Group gap="xs" wrap="nowrap">
        <TextInput
          size="xs"
          aria-label={`Code to remove method ${id}`}
          placeholder="code or backup code"
          required
          value={code}
          onChange={(e) => setCode(e.currentTarget.value)}
          error={remove.error ? errorText(remove.error) : undefined}
        />
        <Button size="xs" color="red" variant="light" type="submit" loading={remove.isPending}>
          Remove
        </Button>
      </Group>
    </form>
  );
}

function RegenerateCodes({ onCodes }: { onCodes: (codes: string[]) => void }) {
  const queries = useQueryClient();
  const regen = useMutation({
    mutationFn: () => ok(api.PUT('/api/v0/tfa/regen-backup-codes', { body: {} })),
    onSuccess: async (answer) => {
      onCodes(answer.backup_codes);
      await queries.invalidateQueries({ queryKey: ['tfa'] });
    },
  });
  return (
    <Button variant="default" onClick={() => regen.mutate()} loading={regen.isPending}>
      New backup codes
    </Button>
  );
}
