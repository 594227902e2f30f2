// How the tests, benchmarks and scripts start Chromium (playwright-core's chromium.launch): Debian's
// package, headless, without the sandbox (containers have no user namespaces), and quiet (no GPU,
// no QUIC, no first-run pages, no background traffic or updates). playwright gives each browser a
// fresh profile directory; launchPersistentContext takes these with the directory it is given.
export const launchOptions = {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};
