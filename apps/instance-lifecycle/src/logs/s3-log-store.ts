import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type { LogStore } from './log-store';

export interface S3LogStoreOptions {
  bucket: string;
  /** Key prefix inside the bucket, e.g. "logs/". */
  prefix?: string;
  /** An S3-compatible endpoint (MinIO, Ceph, R2...); unset = AWS. */
  endpoint?: string;
  region?: string;
  /** Path-style addressing, which most S3-compatible servers need. */
  forcePathStyle?: boolean;
  credentials?: S3ClientConfig['credentials'];
}

/**
 * Logs in an S3 bucket through the AWS SDK. result_url still points at the platform's /logs/<file>
 * (or RIGMARKET_LOG_URL, e.g. a public bucket or CDN in front of it), which reads the object back.
 */
export class S3LogStore implements LogStore {
  private readonly client: S3Client;
  private readonly prefix: string;
  private readonly sdk: typeof import('@aws-sdk/client-s3');

  constructor(private readonly options: S3LogStoreOptions) {
    this.prefix = options.prefix ?? '';
    // Loaded here, not at start: without RIGMARKET_LOG_S3_BUCKET nothing needs the AWS SDK (about 20 MB and
    // half a second to load, docs/benchmarks.md).
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
    this.sdk = require('@aws-sdk/client-s3') as typeof import('@aws-sdk/client-s3');
    this.client = new this.sdk.S3Client({
      region: options.region ?? 'us-east-1',
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle ?? options.endpoint !== undefined,
      credentials: options.credentials,
    });
  }

  /** RIGMARKET_LOG_S3_BUCKET (required), _PREFIX, _ENDPOINT, AWS_REGION; credentials from the SDK's default chain. */
  static fromEnvironment(env: NodeJS.ProcessEnv = process.env): S3LogStore | null {
    const bucket = env.RIGMARKET_LOG_S3_BUCKET;
    if (!bucket) return null;
    return new S3LogStore({
      bucket,
      prefix: env.RIGMARKET_LOG_S3_PREFIX,
      endpoint: env.RIGMARKET_LOG_S3_ENDPOINT,
      region: env.AWS_REGION,
    });
  }

  async put(name: string, text: string): Promise<void> {
    await this.client.send(
      new this.sdk.PutObjectCommand({
        Bucket: this.options.bucket,
        Key: this.prefix + name,
        Body: text,
        ContentType: 'text/plain; charset=utf-8',
      }),
    );
  }

  async get(name: string): Promise<string | null> {
    if (!/^[0-9a-f]{32}\.log$/.test(name)) return null;
    try {
      const object = await this.client.send(
        new this.sdk.GetObjectCommand({ Bucket: this.options.bucket, Key: this.prefix + name }),
      );
      return (await object.Body?.transformToString('utf8')) ?? '';
    } catch (error) {
      if (error instanceof this.sdk.NoSuchKey || (error as { name?: string }).name === 'NoSuchKey')
        return null;
      throw error;
    }
  }
}
