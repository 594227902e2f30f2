// Where the API runs, and Node's built-in modules when it runs in Node. They are imported by a
// name made at run time, behind the bundlers' ignore comments, so that a bundler making a browser
// build neither tries to resolve them nor warns about them: in a browser they never load.
export const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';

export function importNode(name) {
  return import(/* webpackIgnore: true */ /* @vite-ignore */ `node:${name}`);
}
