/** Whether a URL's hostname is this machine: `localhost`, 127.0.0.0/8 or `[::1]`. */
export function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}
