import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { Kafka, logLevel } from 'kafkajs';
import { beforeAll, describe, expect, it } from 'vitest';
import { stackUp, type StackStatus } from '../../stack/local/index.js';
import { REGISTRY_CCOMPAT_URL } from '../../stack/local/registry.js';
import { S3_CREDENTIAL, S3_ENDPOINT, S3_IDENTITY, S3_REGION } from '../../stack/local/s3.js';
import { SMTP_HOST, SMTP_PORT } from '../../stack/local/smtp.js';
import { createMailer } from '../../connectors/email/smtp.js';
import { deleteSubject } from '../../topics/index.js';
import { readMailbox } from '../support/mailbox.js';

const run = `stack-${Date.now().toString(36)}`;

describe('the local stack', () => {
  let status: StackStatus;

  // A first start on a new machine downloads a few hundred MB.
  beforeAll(async () => {
    status = await stackUp();
  }, 15 * 60_000);

  it('reports every service up', () => {
    for (const [name, service] of Object.entries(status)) {
      expect(service.up, `${name}: ${service.detail ?? ''}`).toBe(true);
    }
  });

  it('kafka: the admin client creates and lists topics', async () => {
    const admin = new Kafka({ clientId: run, brokers: [status.kafka.address], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const topic = `${run}.probe`;
      await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
      expect(await admin.listTopics()).toContain(topic);
      await admin.deleteTopics({ topics: [topic] });
    } finally {
      await admin.disconnect();
    }
  });

  it('registry: registers an Avro schema, reads it back and enforces BACKWARD per subject', async () => {
    const subject = `${run}.probe-value`;
    const v1 = {
      type: 'record',
      name: 'Probe',
      namespace: 'gateway.test',
      fields: [{ name: 'id', type: 'string' }],
    };
    const registry = new SchemaRegistry({ host: REGISTRY_CCOMPAT_URL });
    const { id } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(v1) }, { subject });
    const latest = (await (await fetch(`${REGISTRY_CCOMPAT_URL}/subjects/${subject}/versions/latest`)).json()) as {
      id: number;
      schema: string;
    };
    expect(latest.id).toBe(id);
    expect(JSON.parse(latest.schema)).toEqual(v1);
    expect(await registry.decode(await registry.encode(id, { id: 'a' }))).toEqual({ id: 'a' });

    const config = await fetch(`${REGISTRY_CCOMPAT_URL}/config/${subject}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ compatibility: 'BACKWARD' }),
    });
    expect(await config.json()).toEqual({ compatibilityLevel: 'BACKWARD' });
    const register = (schema: object) =>
      fetch(`${REGISTRY_CCOMPAT_URL}/subjects/${subject}/versions`, {
        method: 'POST',
        headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
        body: JSON.stringify({ schema: JSON.stringify(schema) }),
      });
    // A new field without a default cannot be read from records written with v1.
    expect((await register({ ...v1, fields: [...v1.fields, { name: 'n', type: 'int' }] })).status).toBe(409);
    expect((await register({ ...v1, fields: [...v1.fields, { name: 'n', type: 'int', default: 0 }] })).status).toBe(200);
    await deleteSubject(REGISTRY_CCOMPAT_URL, subject);
  });

  it('s3: creates a bucket, puts and gets an object, and serves it through a pre-signed URL', async () => {
    const s3 = new S3Client({
      endpoint: S3_ENDPOINT,
      region: S3_REGION,
      forcePathStyle: true,
      credentials: { accessKeyId: S3_IDENTITY, secretAccessKey: S3_CREDENTIAL },
    });
    const Bucket = run;
    const Key = 'media/hello.txt';
    try {
      await s3.send(new CreateBucketCommand({ Bucket }));
      await s3.send(new PutObjectCommand({ Bucket, Key, Body: 'hello from the stack', ContentType: 'text/plain' }));
      const object = await s3.send(new GetObjectCommand({ Bucket, Key }));
      expect(await object.Body?.transformToString()).toBe('hello from the stack');

      const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket, Key }), { expiresIn: 60 });
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe('hello from the stack');
      expect((await fetch(url.replace(/X-Amz-Signature=[0-9a-f]/, 'X-Amz-Signature=x'))).status).toBe(403);
      expect((await fetch(`${S3_ENDPOINT}/${Bucket}/${Key}`)).status).toBe(403);
    } finally {
      await s3.send(new DeleteObjectCommand({ Bucket, Key }));
      await s3.send(new DeleteBucketCommand({ Bucket }));
      s3.destroy();
    }
  });

  it('smtp: the gateway mailer sends mail that the SMTP server received', async () => {
    const to = `${run}@example.test`;
    const mailer = createMailer(`smtp://${SMTP_HOST}:${SMTP_PORT}`, 'Gateway <noreply@gateway.local>');
    await mailer.check();
    await mailer.send({ to, subject: 'Código de acesso ✓', text: 'Your code is 123456', html: '<p>Your code is <b>123456</b></p>' });
    mailer.close();
    expect(await readMailbox(to)).toEqual([
      { subject: 'Código de acesso ✓', from: 'noreply@gateway.local', to, text: 'Your code is 123456' },
    ]);
  });

  it('a second stackUp starts nothing new: same services, same pids', async () => {
    const again = await stackUp();
    expect(again).toEqual(status);
  });
});
