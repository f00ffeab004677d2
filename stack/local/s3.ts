import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { httpOk } from './health.js';
import { writeProperties, type Layout } from './layout.js';
import { resolveFile } from './maven.js';
import type { JvmService, Log } from './processes.js';

export const S3PROXY_VERSION = '4.1.0';
export const S3_ENDPOINT = 'http://127.0.0.1:9000';
export const S3_REGION = 'us-east-1';
/** Fixed local credentials (access key id and secret), valid only against this stack's s3proxy. */
export const S3_IDENTITY = 'local';
export const S3_CREDENTIAL = 'localsecret';

/** s3proxy: the S3 API (SigV4, pre-signed URLs, path-style) over `<root>/data/s3`. */
export function s3Service(): JvmService {
  return {
    name: 's3',
    address: S3_ENDPOINT,
    ports: [{ host: '127.0.0.1', port: 9000 }],
    startTimeoutMs: 60_000,
    stopTimeoutMs: 10_000,
    probe: () => httpOk(`${S3_ENDPOINT}/healthz`),
    async prepare(l: Layout, log: Log) {
      const jar = await resolveFile(l.cache, `org.gaul:s3proxy:${S3PROXY_VERSION}:jar:jar-with-dependencies`, log);
      const basedir = path.join(l.data, 's3');
      mkdirSync(basedir, { recursive: true });
      const properties = path.join(l.conf, 's3proxy.properties');
      writeProperties(properties, {
        's3proxy.endpoint': S3_ENDPOINT,
        's3proxy.authorization': 'aws-v4',
        's3proxy.identity': S3_IDENTITY,
        's3proxy.credential': S3_CREDENTIAL,
        'jclouds.provider': 'filesystem',
        'jclouds.filesystem.basedir': basedir,
      });
      return { args: ['-Xmx256m', '-jar', jar, '--properties', properties] };
    },
  };
}
