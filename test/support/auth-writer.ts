// A child process for the crash test of the Baileys auth store: writes key sets one after the
// other and prints the index of each once its write has resolved, until it is killed.
import { randomBytes } from 'node:crypto';
import { Curve } from '@whiskeysockets/baileys';
import pg from 'pg';
import { PostgresAuthStore } from '../../connectors/baileys/auth-store.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
const store = await PostgresAuthStore.open(pool, process.env.INSTANCE_ID ?? 'inst_crash');
for (let i = 0; ; i++) {
  await store.keys.set({
    'pre-key': { [`${i}-a`]: Curve.generateKeyPair(), [`${i}-b`]: Curve.generateKeyPair() },
    session: { [`peer-${i}.0`]: randomBytes(64) },
  });
  process.stdout.write(`${i}\n`);
}
