import { type SealFormat, openText, sealText } from '@rigmarket/contracts';

/** instance-lifecycle's sealed values: `v1:<iv>:<tag>:<ciphertext>` (base64), AES-256-GCM (contracts' sealText). */
const FORMAT: SealFormat = { prefix: 'v1:', separator: ':', encoding: 'base64' };

export const sealWith = (key: Buffer, plain: string): string => sealText(key, plain, FORMAT);

export const openWith = (key: Buffer, sealed: string): string => openText(key, sealed, FORMAT);
