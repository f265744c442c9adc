// The orders page: polls GET /orders, ticks the countdowns every second between polls.
// Plain DOM (textContent only: customer ids are user input), no build step.
// An operator view: every call carries the admin token, which the operator types in once per tab.
const REFRESH_MS = 2000;
const TOKEN_KEY = 'orders-page-admin-token';
const tbody = document.getElementById('orders');
const meta = document.getElementById('meta');
const signIn = document.getElementById('sign-in');
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
    const res = await api(`/dev/orders/${order.id}/simulate-payment`, { method: 'POST' }).catch(() => ({
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

/** sessionStorage: the token lives as long as this tab, never in a cookie or on disk for good. */
function adminToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** A call as the operator; a refused token is forgotten and asked for again. */
async function api(path, init = {}) {
  const res = await fetch(path, { ...init, headers: { ...init.headers, authorization: `Bearer ${adminToken()}` } });
  if (res.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    askForToken();
    throw new Error('the admin token was refused');
  }
  return res;
}

function askForToken() {
  signIn.hidden = false;
  meta.textContent = 'Sign in with the admin token (ADMIN_TOKEN; npm start prints the development one).';
}

async function refresh() {
  if (!adminToken()) return;
  try {
    const res = await api('/orders?limit=25');
    const date = res.headers.get('date');
    if (date) clockSkewMs = Date.parse(date) - Date.now();
    orders = (await res.json()).orders;
    meta.textContent = `${orders.length} most recent · updated ${new Date().toLocaleTimeString()}${config.devMode ? ' · dev mode' : ''}`;
    render();
  } catch (err) {
    if (adminToken()) meta.textContent = `cannot load orders: ${err.message}`;
  }
}

let polling = false;
async function start() {
  try {
    config = await (await api('/ui/config')).json();
  } catch (err) {
    if (adminToken()) meta.textContent = `cannot load the page's settings: ${err.message}`; // else api() asked for the token
    return;
  }
  await refresh();
  if (polling) return;
  polling = true;
  setInterval(refresh, REFRESH_MS);
  setInterval(() => document.querySelectorAll('.countdown').forEach(tick), 1000);
}

signIn.addEventListener('submit', async (event) => {
  event.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, tokenInput.value);
  tokenInput.value = '';
  signIn.hidden = true;
  meta.textContent = 'loading …';
  await start();
});

if (adminToken()) await start();
else askForToken();
