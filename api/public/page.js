// The orders page: polls GET /orders, ticks the countdowns every second between polls.
// Plain DOM (textContent only: customer ids are user input), no build step.
// An operator view. Signing in sends the admin token once to POST /operator/session, which answers
// with an HttpOnly session cookie: the browser sends that with every call, and the page never keeps
// the token (not in a variable, not in storage).
const REFRESH_MS = 2000;
const tbody = document.getElementById('orders');
const meta = document.getElementById('meta');
const signIn = document.getElementById('sign-in');
const signOut = document.getElementById('sign-out');
const tokenInput = document.getElementById('admin-token');
let config = { temporalUiUrl: 'http://localhost:8233', namespace: 'default', devMode: false };
let orders = [];
let clockSkewMs = 0; // server clock minus ours, from the Date header: countdowns follow the server

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  for (const child of children) node.append(child);
  return node;
}

function countdown(order) {
  if (order.status !== 'UNPAID') return el('span', { textContent: '—' });
  const span = el('span', { className: 'countdown' });
  span.dataset.expiresAt = order.expiresAt;
  tick(span);
  return span;
}

/** Updates one countdown in place (every second, without rebuilding the rows). */
function tick(span) {
  const left = Date.parse(span.dataset.expiresAt) - (Date.now() + clockSkewMs);
  const s = Math.ceil(left / 1000);
  const clock = `${Math.floor(s / 3600) ? `${Math.floor(s / 3600)}h ` : ''}${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
  span.textContent = left <= 0 ? 'expired, cancelling …' : `${clock} left`;
  span.classList.toggle('late', left <= 0);
}

function fulfillment(order) {
  if (!order.fulfillment) return el('span', { textContent: order.status === 'PAID' ? '…' : '—' });
  const steps = Object.entries(order.fulfillment);
  const done = steps.filter(([, s]) => s === 'DONE').length;
  const wrap = el('span', { className: 'fulfillment', textContent: `${done}/${steps.length} ` });
  for (const [step, s] of steps)
    wrap.append(el('span', { className: `step-${s}`, textContent: `${step} ${s.toLowerCase()} ` }));
  return wrap;
}

function workflowLink(order) {
  const href = `${config.temporalUiUrl}/namespaces/${encodeURIComponent(config.namespace)}/workflows/${encodeURIComponent(order.workflowId)}`;
  return el('a', {
    href,
    target: '_blank',
    rel: 'noopener',
    className: 'workflow-link',
    textContent: order.workflowId,
  });
}

function payButton(order) {
  if (!config.devMode || !order.payable) return '';
  const button = el('button', { className: 'simulate-payment', textContent: 'Simulate payment' });
  button.addEventListener('click', async () => {
    button.disabled = true;
    button.textContent = 'paying …';
    // JSON content type: a call with the session cookie that changes something must carry it (CSRF).
    const res = await api(`/dev/orders/${order.id}/simulate-payment`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    }).catch(() => ({
      ok: false,
      status: 401,
    }));
    button.textContent = res.ok ? 'sent' : `failed (${res.status})`;
    await refresh();
  });
  return button;
}

function render() {
  tbody.replaceChildren(
    ...orders.map((order) =>
      el(
        'tr',
        { className: 'order', id: `order-${order.id}` },
        el('td', {}, el('code', { textContent: order.id.slice(0, 8) })),
        el('td', { textContent: order.customerId }),
        el('td', { textContent: (order.totalCents / 100).toFixed(2) }),
        el(
          'td',
          {},
          el('span', {
            className: `status ${order.status}`,
            textContent: order.status + (order.cancelReason ? ` (${order.cancelReason})` : ''),
          }),
        ),
        el('td', {}, countdown(order)),
        el('td', {}, fulfillment(order)),
        el('td', {}, workflowLink(order)),
        el('td', {}, payButton(order)),
      ),
    ),
  );
}

let signedIn = false;

/** A call as the operator, with the session cookie; a refused (or expired) session asks for the token again. */
async function api(path, init = {}) {
  const res = await fetch(path, { ...init, credentials: 'same-origin' });
  if (res.status === 401) {
    askForToken();
    throw new Error('the session was refused');
  }
  return res;
}

function askForToken() {
  signedIn = false;
  signIn.hidden = false;
  signOut.hidden = true;
  meta.textContent = 'Sign in with the admin token (ADMIN_TOKEN; npm start prints the development one).';
}

async function refresh() {
  if (!signedIn) return;
  try {
    const res = await api('/orders?limit=25');
    const date = res.headers.get('date');
    if (date) clockSkewMs = Date.parse(date) - Date.now();
    orders = (await res.json()).orders;
    meta.textContent = `${orders.length} most recent · updated ${new Date().toLocaleTimeString()}${config.devMode ? ' · dev mode' : ''}`;
    render();
  } catch (err) {
    if (signedIn) meta.textContent = `cannot load orders: ${err.message}`;
  }
}

let polling = false;
/** With a session cookie (from this sign-in or an earlier one), loads the page; without, api() asks for the token. */
async function start() {
  try {
    config = await (await api('/ui/config')).json();
  } catch (err) {
    if (!signIn.hidden) return; // api() asked for the token
    meta.textContent = `cannot load the page's settings: ${err.message}`;
    return;
  }
  signedIn = true;
  signIn.hidden = true;
  signOut.hidden = false;
  await refresh();
  if (polling) return;
  polling = true;
  setInterval(refresh, REFRESH_MS);
  setInterval(() => document.querySelectorAll('.countdown').forEach(tick), 1000);
}

signIn.addEventListener('submit', async (event) => {
  event.preventDefault();
  // The one call that carries the token; the answer's cookie stands in for it from here on.
  const res = await fetch('/operator/session', {
    method: 'POST',
    headers: { authorization: `Bearer ${tokenInput.value}` },
  }).catch(() => undefined);
  tokenInput.value = '';
  if (!res?.ok) {
    meta.textContent = res?.status === 401 ? 'That is not the admin token.' : 'Cannot sign in now; try again.';
    return;
  }
  signIn.hidden = true;
  meta.textContent = 'loading …';
  await start();
});

signOut.addEventListener('click', async () => {
  await fetch('/operator/session', { method: 'DELETE' }).catch(() => undefined);
  orders = [];
  render();
  askForToken();
});

await start();
