-- The gateway's databases, created on the first start of docker-compose's Postgres
-- (for `gateway stack up`, stack/local/postgres.ts creates them on the machine's server).
CREATE DATABASE gateway;
CREATE DATABASE gateway_test;
CREATE DATABASE gateway_registry;
