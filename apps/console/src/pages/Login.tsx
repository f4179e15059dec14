import {
  Anchor,
  Button,
  Container,
  Group,
  Paper,
  PasswordInput,
  Radio,
  Stack,
  Tabs,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, ok } from '../api/client';
import { useAuth } from '../auth';
import { ErrorAlert, useAttempt } from '../ui';

type TfaMethod = 'totp' | 'sms' | 'email' | 'backup';

/** Logging in: with an API key, or a username/e-mail and password plus the second factor when 2FA is on. */
export function LoginPage() {
  const { signIn } = useAuth();
  const navigate = useNavigate();
  const { busy, error, attempt } = useAttempt();
  const [apiKey, setApiKey] = useState('');
  const [login, setLogin] = useState('');
  const [password, setPassword] = useState('');
  /** Set once the password was right and 2FA is on: the login's tfa_secret. */
  const [tfaSecret, setTfaSecret] = useState<string | null>(null);
  const [method, setMethod] = useState<TfaMethod>('totp');
  const [challengeSecret, setChallengeSecret] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [notice, setNotice] = useState<string | null>(null);

  const done = () => navigate('/offers', { replace: true });

  const withKey = (event: FormEvent) => {
    event.preventDefault();
    void attempt(async () => {
      await signIn({ kind: 'key', key: apiKey.trim() });
      done();
    });
  };

  const withPassword = (event: FormEvent) => {
    event.preventDefault();
    void attempt(async () => {
      const who = login.includes('@') ? { email: login.trim() } : { username: login.trim() };
      const answer = await ok(api.POST('/api/v0/users/login', { body: { ...who, password } }));
      if ('tfa_required' in answer && answer.tfa_required) {
        setTfaSecret(answer.tfa_secret);
        return;
      }
      if ('session_key' in answer) {
        await signIn({ kind: 'key', key: answer.session_key });
        done();
      }
    });
  };

  const sendCode = () =>
    void attempt(async () => {
      if (!tfaSecret) return;
      const sent =
        method === 'sms'
          ? await ok(api.POST('/api/v0/tfa/sms', { body: { secret: tfaSecret } }))
          : await ok(api.POST('/api/v0/tfa/email', { body: { secret: tfaSecret } }));
      setChallengeSecret(sent.secret);
      setNotice(sent.msg);
    });

  const secondFactor = (event: FormEvent) => {
    event.preventDefault();
    void attempt(async () => {
      if (!tfaSecret) return;
      const body =
        method === 'backup'
          ? { backup_code: code.trim(), secret: tfaSecret }
          : method === 'totp'
            ? { tfa_method: 'totp' as const, code: code.trim(), secret: tfaSecret }
            : { tfa_method: method, code: code.trim(), secret: challengeSecret ?? tfaSecret };
      // A logged-out caller's session comes back as an HttpOnly cookie (a bearer caller's in the body).
      const answer = await ok(api.POST('/api/v0/tfa', { body }));
      await signIn(answer.session_key ? { kind: 'key', key: answer.session_key } : { kind: 'cookie' });
      done();
    });
  };

  return (
    <Container size={460} py="xl">
      <Title order={1} ta="center" mb="md">
        Rigmarket console
      </Title>
      <Paper withBorder shadow="sm" p="lg" radius="md">
        <ErrorAlert error={error} mb="md" title="Login failed" />
        {tfaSecret ? (
          <form onSubmit={secondFactor} aria-label="Second factor">
            <Stack>
              <Text>Two-factor authentication is on for this account. Choose how to confirm it is you.</Text>
              <Radio.Group
                label="Method"
                value={method}
                onChange={(value) => {
                  setMethod(value as TfaMethod);
                  setCode('');
                  setNotice(null);
                }}
              >
                <Group mt="xs">
                  <Radio value="totp" label="Authenticator app" />
                  <Radio value="sms" label="SMS" />
                  <Radio value="email" label="E-mail" />
                  <Radio value="backup" label="Backup code" />
                </Group>
              </Radio.Group>
              {(method === 'sms' || method === 'email') && (
                <Button variant="light" onClick={sendCode} loading={busy}>
                  Send me a code by {method === 'sms' ? 'SMS' : 'e-mail'}
                </Button>
              )}
              {notice && <Text size="sm">{notice}</Text>}
              <TextInput
                label={method === 'backup' ? 'Backup code' : '6-digit code'}
                autoComplete="one-time-code"
                inputMode={method === 'backup' ? 'text' : 'numeric'}
                required
                value={code}
                onChange={(e) => setCode(e.currentTarget.value)}
              />
              <Button type="submit" loading={busy}>
                Verify
              </Button>
              <Anchor component="button" type="button" onClick={() => setTfaSecret(null)}>
                Back
              </Anchor>
            </Stack>
          </form>
        ) : (
          <Tabs defaultValue="password">
            <Tabs.List grow mb="md">
              <Tabs.Tab value="password">Password</Tabs.Tab>
              <Tabs.Tab value="key">API key</Tabs.Tab>
            </Tabs.List>
            <Tabs.Panel value="password">
              <form onSubmit={withPassword} aria-label="Log in with a password">
                <Stack>
                  <TextInput
                    label="Username or e-mail"
                    autoComplete="username"
                    required
                    value={login}
                    onChange={(e) => setLogin(e.currentTarget.value)}
                  />
                  <PasswordInput
                    label="Password"
                    autoComplete="current-password"
                    required
                    value={password}
                    onChange={(e) => setPassword(e.currentTarget.value)}
                  />
                  <Button type="submit" loading={busy}>
                    Log in
                  </Button>
                </Stack>
              </form>
            </Tabs.Panel>
            <Tabs.Panel value="key">
              <form onSubmit={withKey} aria-label="Log in with an API key">
                <Stack>
                  <PasswordInput
                    label="API key"
                    description="Kept in this tab only (sessionStorage); closing the tab forgets it."
                    autoComplete="off"
                    required
                    value={apiKey}
                    onChange={(e) => setApiKey(e.currentTarget.value)}
                  />
                  <Button type="submit" loading={busy}>
                    Use this key
                  </Button>
                </Stack>
              </form>
            </Tabs.Panel>
          </Tabs>
        )}
        {!tfaSecret && (
          <Anchor component={Link} to="/signup" display="block" ta="center" mt="md">
            New here? Create an account
          </Anchor>
        )}
      </Paper>
    </Container>
  );
}
