import { Alert, type AlertProps } from '@mantine/core';
import { useCallback, useState } from 'react';
import { errorText } from './api/client';

/** A failure shown to the user (role alert, so screen readers announce it); nothing when there is none. */
export function ErrorAlert({ error, ...props }: { error: unknown } & Omit<AlertProps, 'children'>) {
  if (error === null || error === undefined || error === false) return null;
  return (
    <Alert color="red" role="alert" {...props}>
      {errorText(error)}
    </Alert>
  );
}

/** Runs one step of a multi-step form (login, sign-up, 2FA set-up): busy while it runs, its failure kept. */
export function useAttempt() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const attempt = useCallback(async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, attempt };
}
