// The workerd build has the Node build's API exactly.
export * from '../node/index.js';
export { default } from '../node/index.js';
