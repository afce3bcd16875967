-- dbbench package-repository metadata model, PostgreSQL 12+.
-- Tables only carry primary keys; secondary indexes are in the "-- indexes" part and are built
-- after the bulk load. Statements are separated by lines ending in ';'.

CREATE TABLE repository (
    id          integer PRIMARY KEY,
    name        varchar(200) NOT NULL,
    format      varchar(32)  NOT NULL,
    type        varchar(32)  NOT NULL,
    online      boolean      NOT NULL
);

CREATE TABLE package (
    id                bigint        PRIMARY KEY,
    repository_id     integer       NOT NULL,
    distribution_name varchar(384)  NOT NULL,
    component_name    varchar(64)   NOT NULL,
    architecture      varchar(32)   NOT NULL,
    package_name      varchar(200)  NOT NULL,
    version           varchar(128)  NOT NULL,
    asset_path        varchar(1024) NOT NULL,
    path_sha256       bytea         NOT NULL,
    size_bytes        bigint        NOT NULL,
    created_at        timestamp     NOT NULL
);

CREATE TABLE package_relation (
    id            bigint       PRIMARY KEY,
    repository_id integer      NOT NULL,
    package_id    bigint       NOT NULL,
    relation_kind varchar(16)  NOT NULL,
    token         varchar(512) NOT NULL,
    token_sha256  bytea        NOT NULL
);

CREATE TABLE suite_state (
    repository_id      integer      NOT NULL,
    distribution_name  varchar(384) NOT NULL,
    desired_revision   bigint       NOT NULL,
    published_revision bigint       NOT NULL,
    desired_at         timestamp    NOT NULL,
    next_attempt_at    timestamp    NOT NULL,
    error_count        integer      NOT NULL,
    pending            boolean      GENERATED ALWAYS AS (desired_revision > published_revision) STORED,
    PRIMARY KEY (repository_id, distribution_name)
);

CREATE TABLE snapshot (
    repository_id         integer      NOT NULL,
    distribution_name     varchar(384) NOT NULL,
    revision              bigint       NOT NULL,
    created_at            timestamp    NOT NULL,
    published_at          timestamp    NULL,
    group_binding_token   bytea        NULL,
    PRIMARY KEY (repository_id, distribution_name, revision)
);

CREATE TABLE group_snapshot_stage (
    group_repository_id integer      NOT NULL,
    distribution_name   varchar(384) NOT NULL,
    snapshot_revision   bigint       NOT NULL,
    binding_token       bytea        NOT NULL,
    created_at          timestamp    NOT NULL,
    PRIMARY KEY (group_repository_id, distribution_name, snapshot_revision, binding_token)
);

-- Bindings are keyed by their page index (unique, below), not by id alone: with a bare id key
-- PostgreSQL would page through the narrower id index and filter the other stages' rows.
CREATE TABLE group_binding (
    id                   bigint       NOT NULL,
    group_repository_id  integer      NOT NULL,
    distribution_name    varchar(384) NOT NULL,
    snapshot_revision    bigint       NOT NULL,
    binding_token        bytea        NOT NULL,
    member_repository_id integer      NOT NULL,
    package_id           bigint       NOT NULL
);

-- indexes

-- Sort in memory: index builds on 100k-row tables take a fraction of the default's time.
SET maintenance_work_mem = '512MB';

ALTER TABLE package ADD CONSTRAINT uq_package_path UNIQUE (repository_id, path_sha256);
ALTER TABLE package ADD CONSTRAINT uq_package_repository_id UNIQUE (repository_id, id);
CREATE INDEX ix_package_namespace ON package (repository_id, distribution_name, package_name, id);
CREATE INDEX ix_package_full ON package (repository_id, distribution_name, component_name, architecture, package_name, id);
CREATE INDEX ix_relation_lookup ON package_relation (repository_id, relation_kind, token_sha256, package_id);
ALTER TABLE package_relation ADD CONSTRAINT fk_relation_package FOREIGN KEY (repository_id, package_id) REFERENCES package (repository_id, id) ON DELETE CASCADE;
CREATE INDEX ix_suite_pending ON suite_state (pending, desired_at, repository_id, distribution_name) WHERE pending;
CREATE INDEX ix_snapshot_cleanup ON snapshot (created_at, repository_id, distribution_name, revision) WHERE published_at IS NOT NULL;
CREATE INDEX ix_stage_cleanup ON group_snapshot_stage (created_at, group_repository_id, distribution_name, snapshot_revision, binding_token);
CREATE UNIQUE INDEX ix_binding_page ON group_binding (group_repository_id, distribution_name, snapshot_revision, binding_token, id);
ALTER TABLE group_binding ADD CONSTRAINT fk_binding_stage FOREIGN KEY (group_repository_id, distribution_name, snapshot_revision, binding_token) REFERENCES group_snapshot_stage (group_repository_id, distribution_name, snapshot_revision, binding_token) ON DELETE CASCADE;
