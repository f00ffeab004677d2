import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';

export interface S3Config {
  readonly endpoint: string;
  readonly region: string;
  readonly bucket: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly forcePathStyle: boolean;
}

/** The private bucket that holds media. Received media goes here; URLs are pre-signed at read time. */
export interface MediaBucket {
  readonly client: S3Client;
  readonly bucket: string;
  /** Creates the bucket if it does not exist (local stacks start empty). */
  ensure(): Promise<void>;
  /** Throws unless the bucket answers. */
  check(): Promise<void>;
  close(): void;
}

export function createMediaBucket(config: S3Config): MediaBucket {
  // The SDK's notice that its releases after January 2027 need Node 22: the lock file holds a
  // release whose engines include Node 20, which this project still supports. This is the SDK's
  // own switch for that notice alone; remove it when Node 20 is dropped.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const client = new S3Client({
    endpoint: config.endpoint,
    region: config.region,
    forcePathStyle: config.forcePathStyle,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
    maxAttempts: 2,
    // Uploads go as one plain body with its length: the default (aws-chunked with a trailing
    // checksum) leaves s3proxy connections broken for the next request now and then.
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
  const head = () => client.send(new HeadBucketCommand({ Bucket: config.bucket }));
  return {
    client,
    bucket: config.bucket,
    async ensure() {
      try {
        await head();
      } catch (error) {
        if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== 404) throw error;
        await client.send(new CreateBucketCommand({ Bucket: config.bucket }));
      }
    },
    async check() {
      await head();
    },
    close: () => client.destroy(),
  };
}
