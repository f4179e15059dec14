import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from 'react';
import { api, type Credential, ok, storeCredential, storedCredential, type User } from './api/client';

interface Auth {
  signedIn: boolean;
  user: User | undefined;
  /** Keeps the credential (a bearer, or the session cookie) after checking it with users/current. */
  signIn(credential: Credential): Promise<User>;
  signOut(): Promise<void>;
}

const AuthContext = createContext<Auth | null>(null);

export function useAuth(): Auth {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error('useAuth outside AuthProvider');
  return auth;
}

export function useCurrentUser(enabled = true) {
  return useQuery({
    queryKey: ['users/current'],
    queryFn: () => ok(api.GET('/api/v0/users/current')),
    enabled,
    refetchInterval: 30_000,
  });
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const queries = useQueryClient();
  const [credential, setCredential] = useState<Credential | null>(() => storedCredential());
  const user = useCurrentUser(credential !== null);

  const signIn = useCallback(
    async (candidate: Credential) => {
      const checked = await ok(
        api.GET(
          '/api/v0/users/current',
          candidate.kind === 'key' ? { headers: { Authorization: `Bearer ${candidate.key}` } } : {},
        ),
      );
      storeCredential(candidate);
      queries.clear();
      queries.setQueryData(['users/current'], checked);
      setCredential(candidate);
      return checked;
    },
    [queries],
  );

  const signOut = useCallback(async () => {
    // A session key from a password login ends on the server too; an API key stays valid (it was pasted).
    await api.POST('/api/v0/users/logout').catch(() => undefined);
    storeCredential(null);
    queries.clear();
    setCredential(null);
  }, [queries]);

  const signedIn = credential !== null;
  const value = useMemo(
    () => ({ signedIn, user: user.data, signIn, signOut }),
    [signedIn, user.data, signIn, signOut],
  );
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}
