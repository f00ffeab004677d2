import { httpOk } from './health.js';
import type { Layout } from './layout.js';
import { unpackArchive } from './maven.js';
import { postgresServer, REGISTRY_DATABASE, type PostgresServer } from './postgres.js';
import type { JvmService, Log } from './processes.js';

// 3.3.x is built for Java 21; 3.0.9 is the newest Registry 3 on Maven Central that runs on Java 17.
export const REGISTRY_VERSION = '3.0.9';
export const REGISTRY_URL = 'http://127.0.0.1:8081';
/** The Confluent-compatible API: the base URL for `@kafkajs/confluent-schema-registry`. */
export const REGISTRY_CCOMPAT_URL = `${REGISTRY_URL}/apis/ccompat/v7`;

export function registryService(): JvmService {
  return {
    name: 'registry',
    address: REGISTRY_CCOMPAT_URL,
    ports: [{ host: '127.0.0.1', port: 8081 }],
    startTimeoutMs: 120_000,
    stopTimeoutMs: 20_000,
    probe: () => httpOk(`${REGISTRY_URL}/health/ready`),
    async prepare(l: Layout, log: Log) {
      const home = await unpackArchive(
        l.cache,
        `apicurio-registry-${REGISTRY_VERSION}`,
        `io.apicurio:apicurio-registry-app:${REGISTRY_VERSION}:tar.gz:all`,
        log,
      );
      const db = postgresServer();
      // Through the environment rather than the command line, which `ps` shows to everyone.
      const env: Record<string, string> = db.password ? { APICURIO_DATASOURCE_PASSWORD: db.password } : {};
      return {
        cwd: home,
        env,
        args: [
          '-Xmx512m',
          ...Object.entries(settings(db)).map(([key, value]) => `-D${key}=${value}`),
          '-jar',
          `apicurio-registry-app-${REGISTRY_VERSION}-runner.jar`,
        ],
      };
    },
  };
}

function settings(db: PostgresServer): Record<string, string> {
  return {
    'quarkus.http.host': '127.0.0.1',
    'quarkus.http.port': '8081',
    // SQL storage, not the in-memory default: schema ids inside Kafka records must resolve after a restart.
    'apicurio.storage.kind': 'sql',
    'apicurio.storage.sql.kind': 'postgresql',
    'apicurio.datasource.url': `jdbc:postgresql://${db.host}:${db.port}/${REGISTRY_DATABASE}`,
    'apicurio.datasource.username': db.user,
    // The defaults (20 to 100 connections) would take most of a development server's connections.
    'apicurio.datasource.jdbc.initial-size': '2',
    'apicurio.datasource.jdbc.min-size': '2',
    'apicurio.datasource.jdbc.max-size': '10',
    // As in Confluent's registry: subjects evolve BACKWARD unless their own config says otherwise,
    'apicurio.rules.global.compatibility': 'BACKWARD',
    // and a schema that differs only in formatting is the one registered already.
    'apicurio.ccompat.use-canonical-hash': 'true',
  };
}
