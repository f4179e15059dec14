import { Navigate, Route, Routes } from 'react-router';
import { useAuth } from './auth';
import { Layout } from './Layout';
import { AuditPage } from './pages/Audit';
import { BillingPage } from './pages/Billing';
import { HostPage } from './pages/Host';
import { KeysPage } from './pages/Keys';
import { InstancesPage } from './pages/Instances';
import { LoginPage } from './pages/Login';
import { OffersPage } from './pages/Offers';
import { SecurityPage } from './pages/Security';
import { SignupPage } from './pages/Signup';
import { TemplatesPage } from './pages/Templates';
import { VolumesPage } from './pages/Volumes';

/** Client routes; the server answers index.html for each of them (docs/console.md). */
export function App() {
  const { signedIn } = useAuth();
  if (!signedIn)
    return (
      <Routes>
        <Route path="/login" element={<LoginPage />} />
        <Route path="/signup" element={<SignupPage />} />
        <Route path="*" element={<Navigate to="/login" replace />} />
      </Routes>
    );
  return (
    <Routes>
      <Route element={<Layout />}>
        <Route path="/offers" element={<OffersPage />} />
        <Route path="/instances" element={<InstancesPage />} />
        <Route path="/host" element={<HostPage />} />
        <Route path="/templates" element={<TemplatesPage />} />
        <Route path="/volumes" element={<VolumesPage />} />
        <Route path="/keys" element={<KeysPage />} />
        <Route path="/billing" element={<BillingPage />} />
        <Route path="/audit" element={<AuditPage />} />
        <Route path="/security" element={<SecurityPage />} />
      </Route>
      <Route path="*" element={<Navigate to="/offers" replace />} />
    </Routes>
  );
}
