/** One jest run, three kinds of test (docs/architecture.md): unit (pure), int (real Postgres/Kafka), e2e (HTTP). */
const fs = require('node:fs');
const path = require('node:path');

const swc = JSON.parse(fs.readFileSync(path.join(__dirname, '.swcrc'), 'utf8'));
const moduleNameMapper = {};
for (const dir of ['packages', 'apps']) {
  for (const name of fs.readdirSync(path.join(__dirname, dir))) {
    moduleNameMapper[`^@rigmarket/${name}$`] = `<rootDir>/${dir}/${name}/src`;
  }
}
const base = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swc, swcrc: false }] },
  moduleNameMapper,
  // .infra/ holds copies of the packages (the deployment check's image context): never modules.
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/', '<rootDir>/.infra/'],
  setupFiles: ['reflect-metadata', '<rootDir>/jest.env.js'],
};
module.exports = {
  testTimeout: 120000,
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/{apps,packages}/*/src/**/*.spec.ts'] },
    { ...base, displayName: 'int', testMatch: ['<rootDir>/{apps,packages}/*/src/**/*.int-spec.ts'] },
    { ...base, displayName: 'e2e', testMatch: ['<rootDir>/{apps,packages}/*/src/**/*.e2e-spec.ts'] },
  ],
};
