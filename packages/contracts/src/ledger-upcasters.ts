import { legacyDollarsToMicros } from './money';
import { registerUpcaster } from './schema-registry';

/** Version 1 -> 2: float dollars `amount` (`balance`) -> integer `amountMicros` (`balanceMicros`). */
for (const type of ['CreditGranted', 'AccountCharged', 'HostEarned']) {
  registerUpcaster(type, 1, (data) => {
    const { amount, ...rest } = data as { amount?: unknown };
    return { ...rest, amountMicros: legacyDollarsToMicros(amount) };
  });
}
registerUpcaster('CreditExhausted', 1, (data) => {
  const { balance, ...rest } = data as { balance?: unknown };
  return { ...rest, balanceMicros: legacyDollarsToMicros(balance) };
});
