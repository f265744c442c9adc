import { readdir, readFile } from 'node:fs/promises';
import proto from '@temporalio/proto';

const { History } = proto.temporal.api.history.v1;
type History = proto.temporal.api.history.v1.IHistory;

export const HISTORIES_DIR = new URL('./histories/', import.meta.url);

/** The one history recorded with its payloads encrypted (record-encrypted-history.record.ts). */
export const ENCRYPTED_HISTORY = 'encrypted-paid-and-fulfilled';

/** Protobuf's own object form, as readable JSON (enums by name, 64-bit numbers as strings). */
export function historyToFixture(history: History): string {
  return `${JSON.stringify(History.toObject(History.fromObject(history), { enums: String, longs: String, bytes: String }), null, 1)}\n`;
}

/** Every recorded history, named after its file. */
export async function loadHistoryFixtures(): Promise<Array<{ name: string; history: History }>> {
  const files = (await readdir(HISTORIES_DIR)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (file) => ({
      name: file.replace(/\.json$/, ''),
      history: History.fromObject(JSON.parse(await readFile(new URL(file, HISTORIES_DIR), 'utf8'))),
    })),
  );
}
