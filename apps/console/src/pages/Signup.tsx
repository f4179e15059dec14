import {
  Anchor,
  Button,
  Container,
  Paper,
  PasswordInput,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, ok } from '../api/client';
import { useAuth } from '../auth';
import { ErrorAlert, useAttempt } from '../ui';

/**
 * Sign-up: e-mail, optional username, password (8+); the platform mails a verification code, which the
 * second step takes (POST users/verify_email/); then the console logs in with the same password.
 */
export function SignupPage() {
  const { signIn } = useAuth();
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [registered, setRegistered] = useState(false);
  const { busy, error, attempt } = useAttempt();

  const register = (e: FormEvent) => {
    e.preventDefault();
    void attempt(async () => {
      await ok(
        api.POST('/api/v0/users', {
          body: { email: email.trim(), password, ...(username.trim() ? { username: username.trim() } : {}) },
        }),
      );
      setRegistered(true);
    });
  };

  const verify = (e: FormEvent) => {
    e.preventDefault();
    void attempt(async () => {
      await ok(api.POST('/api/v0/users/verify_email', { body: { email: email.trim(), code: code.trim() } }));
      const answer = await ok(api.POST('/api/v0/users/login', { body: { email: email.trim(), password } }));
      if ('session_key' in answer) await signIn({ kind: 'key', key: answer.session_key });
      navigate('/offers', { replace: true });
    });
  };

  return (
    <Container size={460} py="xl">
      <Title order={1} ta="center" mb="md">
        Create a Rigmarket account
      </Title>
      <Paper withBorder shadow="sm" p="lg" radius="md">
        <ErrorAlert error={error} mb="md" title="That did not work" />
        {registered ? (
          <form onSubmit={verify} aria-label="Verify your e-mail">
            <Stack>
              <Text>We sent a verification code to {email}. Enter it to finish.</Text>
              <TextInput
                label="Verification code"
                autoComplete="one-time-code"
                required
                value={code}
                onChange={(e) => setCode(e.currentTarget.value)}
              />
              <Button type="submit" loading={busy}>
                Verify and log in
              </Button>
            </Stack>
          </form>
        ) : (
          <form onSubmit={register} aria-label="Sign up">
            <Stack>
              <TextInput
                label="E-mail"
                type="email"
                autoComplete="email"
                required
                value={email}
                onChange={(e) => setEmail(e.currentTarget.value)}
              />
              <TextInput
                label="Username (optional)"
                autoComplete="username"
                value={username}
                onChange={(e) => setUsername(e.currentTarget.value)}
              />
              <PasswordInput
                label="Password"
                description="At least 8 characters"
                autoComplete="new-password"
                required
                minLength={8}
                value={password}
                onChange={(e) => setPassword(e.currentTarget.value)}
              />
              <Button type="submit" loading={busy}>
                Sign up
              </Button>
              <Anchor component={Link} to="/login" ta="center">
                I have an account: log in
              </Anchor>
            </Stack>
          </form>
        )}
      </Paper>
    </Container>
  );
}
