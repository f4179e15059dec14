import { legacyDollarsToMicros } from './money';
import { registerUpcaster } from './schema-registry';

/** Version 1 -> 2: float dollars `amount` (`balance`) -> integer `amountMicros` (`balanceMicros`). */
for (const type of ['CreditGranted', 'AccountCharged', 'HostEarned']) {
  registerUpcaster(type, 1, (data) => {
    const { amount, ...rest } = data as { amount?: unknown };
    return { ...rest, amountMicros: legacyDollarsToMicros(amount) };
  });
}
/** Version 1 -> 2: the billed rate in float dollars per hour -> integer micro-dollars per hour. */
registerUpcaster('InstanceBillingChanged', 1, (data) => {
  const { ratePerHour, ...rest } = data as { ratePerHour?: unknown };
  return { ...rest, ratePerHourMicros: legacyDollarsToMicros(ratePerHour) };
});
registerUpcaster('CreditExhausted', 1, (data) => {
  const { balance, ...rest } = data as { balance?: unknown };
  return { ...rest, balanceMicros: legacyDollarsToMicros(balance) };
});
