import { startMailpit, type RunningMailpit } from '../../dev/mailpit.js';

/** One message as Mailpit's HTTP API shows it (the fields the tests read). */
export interface ReceivedEmail {
  ID: string;
  /** Without the angle brackets. */
  MessageID: string;
  From: { Name: string; Address: string };
  To: Array<{ Name: string; Address: string }>;
  ReplyTo: Array<{ Name: string; Address: string }>;
  Subject: string;
  Text: string;
  HTML: string;
}

export interface TestMailpit extends RunningMailpit {
  /** Every message received, newest first, read in full. */
  received(): Promise<ReceivedEmail[]>;
  /** Forgets every message received. */
  clear(): Promise<void>;
}

/**
 * A real SMTP server for a test file: Mailpit on free loopback ports, its mailbox read through its
 * HTTP API. `extraArgs` are more of Mailpit's flags.
 */
export async function startTestMailpit(extraArgs: readonly string[] = []): Promise<TestMailpit> {
  const mailpit = await startMailpit({ extraArgs });
  const api = async (method: 'GET' | 'DELETE', path: string): Promise<unknown> => {
    const response = await fetch(`${mailpit.httpUrl}/api/v1${path}`, { method });
    if (!response.ok) throw new Error(`Mailpit ${method} ${path}: ${response.status} ${await response.text()}`);
    return method === 'GET' ? response.json() : undefined;
  };
  return {
    ...mailpit,
    async received() {
      const list = (await api('GET', '/messages?limit=1000')) as { messages: Array<{ ID: string }> };
      return Promise.all(list.messages.map(async ({ ID }) => (await api('GET', `/message/${ID}`)) as ReceivedEmail));
    },
    clear: () => api('DELETE', '/messages').then(() => undefined),
  };
}
