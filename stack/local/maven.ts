import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Log } from './processes.js';

// 2.10 fetches a single file without reading the parent POMs of its POM. Newer versions read them
// and fail where the repository lacks one, as Maven Central here lacks Apicurio 3.0.9's parent POM.
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:2.10';

interface Coordinates {
  readonly groupId: string;
  readonly artifactId: string;
  readonly version: string;
  readonly type: string;
  readonly classifier?: string;
}

/** `groupId:artifactId:version[:type[:classifier]]`, the form Maven's `-Dartifact` takes. */
function parse(coordinates: string): Coordinates {
  const [groupId, artifactId, version, type = 'jar', classifier] = coordinates.split(':');
  if (!groupId || !artifactId || !version) throw new Error(`not Maven coordinates: ${coordinates}`);
  return { groupId, artifactId, version, type, classifier };
}

function repositoryFile(cache: string, coordinates: string): string {
  const c = parse(coordinates);
  const file = `${c.artifactId}-${c.version}${c.classifier ? `-${c.classifier}` : ''}.${c.type}`;
  return path.join(cache, 'm2', ...c.groupId.split('.'), c.artifactId, c.version, file);
}

/** The jars of `dependencies` and of everything they need at runtime, resolved once. */
export async function resolveClasspath(cache: string, name: string, dependencies: readonly string[], log: Log): Promise<string[]> {
  const dir = path.join(cache, name);
  const listFile = path.join(dir, 'classpath.txt');
  const cached = readClasspath(listFile);
  if (cached) return cached;
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'pom.xml'), pom(name, dependencies.map(parse)));
  log(`${name}: downloading jars with Maven into ${cache}`);
  await mvn(cache, dir, [`${DEPENDENCY_PLUGIN}:build-classpath`, '-Dmdep.includeScope=runtime', `-Dmdep.outputFile=${listFile}`]);
  const jars = readClasspath(listFile);
  if (!jars) throw new Error(`Maven did not produce a usable classpath in ${listFile}`);
  return jars;
}

/** One file of the repository without its dependencies, e.g. an all-in-one jar. */
export async function resolveFile(cache: string, coordinates: string, log: Log): Promise<string> {
  const file = repositoryFile(cache, coordinates);
  if (existsSync(file)) return file;
  log(`downloading ${coordinates} with Maven into ${cache}`);
  await mvn(cache, cache, [`${DEPENDENCY_PLUGIN}:get`, `-Dartifact=${coordinates}`, '-Dtransitive=false']);
  if (!existsSync(file)) throw new Error(`Maven finished but ${file} is missing`);
  return file;
}

/** An archive of the repository, unpacked once into `<cache>/<name>`. */
export async function unpackArchive(cache: string, name: string, coordinates: string, log: Log): Promise<string> {
  const dir = path.join(cache, name);
  if (existsSync(dir)) return dir;
  const partial = `${dir}.partial`;
  // The plugin leaves marker files under its working directory: give it one to throw away.
  const scratch = `${dir}.maven`;
  for (const folder of [partial, scratch]) rmSync(folder, { recursive: true, force: true });
  mkdirSync(scratch);
  log(`${name}: downloading and unpacking ${coordinates} with Maven into ${cache}`);
  try {
    await mvn(cache, scratch, [`${DEPENDENCY_PLUGIN}:unpack`, `-Dartifact=${coordinates}`, `-DoutputDirectory=${partial}`]);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  renameSync(partial, dir);
  return dir;
}

function readClasspath(listFile: string): string[] | undefined {
  if (!existsSync(listFile)) return undefined;
  const jars = readFileSync(listFile, 'utf8').trim().split(path.delimiter).filter(Boolean);
  return jars.length > 0 && jars.every((jar) => existsSync(jar)) ? jars : undefined;
}

function pom(name: string, dependencies: readonly Coordinates[]): string {
  const xml = dependencies.map((d) =>
    [
      '    <dependency>',
      `<groupId>${d.groupId}</groupId><artifactId>${d.artifactId}</artifactId><version>${d.version}</version>`,
      d.type === 'jar' ? '' : `<type>${d.type}</type>`,
      d.classifier ? `<classifier>${d.classifier}</classifier>` : '',
      '</dependency>',
    ].join(''),
  );
  return [
    '<project xmlns="http://maven.apache.org/POM/4.0.0">',
    '  <modelVersion>4.0.0</modelVersion>',
    `  <groupId>local.gateway.stack</groupId><artifactId>${name}</artifactId><version>1</version><packaging>pom</packaging>`,
    '  <dependencies>',
    ...xml,
    '  </dependencies>',
    '</project>',
    '',
  ].join('\n');
}

let queue: Promise<unknown> = Promise.resolve();

/** Runs Maven one invocation at a time: parallel runs would race on the same local repository. */
function mvn(cache: string, cwd: string, args: readonly string[]): Promise<void> {
  const run = queue.then(() => runMaven(cache, cwd, args));
  queue = run.catch(() => undefined);
  return run;
}

function runMaven(cache: string, cwd: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('mvn', ['-B', '-q', `-Dmaven.repo.local=${path.join(cache, 'm2')}`, ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', (error) =>
      reject(new Error(`cannot run Maven (mvn), needed once to download the local services: ${error.message}`)),
    );
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`mvn ${args[0]} failed (exit ${code}):\n${output.trim()}`)),
    );
  });
}
