/**
 * Node 24 warns when a timer is given a negative delay, and kafkajs 2.2.4 schedules its request
 * queue's check with one on every connection (tulios/kafkajs#1751, fixed upstream but unreleased):
 * Node already runs such a timer after 1 ms, so the warning says nothing an operator can act on.
 * Every other warning is printed as Node prints it.
 */
export function quietKnownWarnings(): void {
  const printers = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (warning.name === 'TimeoutNegativeWarning') return;
    for (const print of printers) print(warning);
  });
}
