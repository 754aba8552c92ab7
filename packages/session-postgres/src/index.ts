export { openPostgresStore, PostgresSessionStore, type PostgresStoreOptions } from './store.ts'
export { migrate, MIGRATIONS } from './migrations.ts'
export { maskUrl } from './url.ts'
