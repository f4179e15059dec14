import { Navigate, Route, Routes } from 'react-router';
import { useAuth } from './auth';
import { Layout } from './Layout';
import { HostPage } from './pages/Host';
import { InstancesPage } from './pages/Instances';
import { LoginPage } from './pages/Login';
import { OffersPage } from './pages/Offers';

/** Client routes; the server answers index.html for each of them (docs/console.md). */
export function App() {
  const { signedIn } = useAuth();
  if (!signedIn)
    return (
      <Routes>
        <Route path="/login" element={<LoginPage />} />
        <Route path="*" element={<Navigate to="/login" replace />} />
      </Routes>
    );
  return (
    <Routes>
      <Route element={<Layout />}>
        <Route path="/offers" element={<OffersPage />} />
        <Route path="/instances" element={<InstancesPage />} />
        <Route path="/host" element={<HostPage />} />
      </Route>
      <Route path="*" element={<Navigate to="/offers" replace />} />
    </Routes>
  );
}
