-- dbbench package-repository metadata model, MySQL 8.0.18+ (InnoDB, utf8mb4, binary collations
-- on name/path/hash columns). MySQL has no partial indexes: the pending worker index leads with
-- the stored generated column `pending`. Tables only carry primary keys; secondary indexes are in
-- the "-- indexes" part and are built after the bulk load.

CREATE TABLE repository (
    id          int          NOT NULL PRIMARY KEY,
    name        varchar(200) NOT NULL,
    format      varchar(32)  NOT NULL,
    type        varchar(32)  NOT NULL,
    online      boolean      NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE package (
    id                bigint        NOT NULL PRIMARY KEY,
    repository_id     int           NOT NULL,
    distribution_name varchar(384)  NOT NULL,
    component_name    varchar(64)   NOT NULL,
    architecture      varchar(32)   NOT NULL,
    package_name      varchar(200)  NOT NULL,
    version           varchar(128)  NOT NULL,
    asset_path        varchar(1024) NOT NULL,
    path_sha256       binary(32)    NOT NULL,
    size_bytes        bigint        NOT NULL,
    created_at        datetime(6)   NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE package_relation (
    id            bigint       NOT NULL PRIMARY KEY,
    repository_id int          NOT NULL,
    package_id    bigint       NOT NULL,
    relation_kind varchar(16)  NOT NULL,
    token         varchar(512) NOT NULL,
    token_sha256  binary(32)   NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE suite_state (
    repository_id      int          NOT NULL,
    distribution_name  varchar(384) NOT NULL,
    desired_revision   bigint       NOT NULL,
    published_revision bigint       NOT NULL,
    desired_at         datetime(6)  NOT NULL,
    next_attempt_at    datetime(6)  NOT NULL,
    error_count        int          NOT NULL,
    pending            boolean      GENERATED ALWAYS AS (desired_revision > published_revision) STORED NOT NULL,
    PRIMARY KEY (repository_id, distribution_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE snapshot (
    repository_id       int          NOT NULL,
    distribution_name   varchar(384) NOT NULL,
    revision            bigint       NOT NULL,
    created_at          datetime(6)  NOT NULL,
    published_at        datetime(6)  NULL,
    group_binding_token binary(32)   NULL,
    PRIMARY KEY (repository_id, distribution_name, revision)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE group_snapshot_stage (
    group_repository_id int          NOT NULL,
    distribution_name   varchar(384) NOT NULL,
    snapshot_revision   bigint       NOT NULL,
    binding_token       binary(32)   NOT NULL,
    created_at          datetime(6)  NOT NULL,
    PRIMARY KEY (group_repository_id, distribution_name, snapshot_revision, binding_token)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE group_binding (
    id                   bigint       NOT NULL PRIMARY KEY,
    group_repository_id  int          NOT NULL,
    distribution_name    varchar(384) NOT NULL,
    snapshot_revision    bigint       NOT NULL,
    binding_token        binary(32)   NOT NULL,
    member_repository_id int          NOT NULL,
    package_id           bigint       NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- indexes

-- Adding a foreign key with checks on forces a table copy; the seeder proves referential
-- integrity with its own verification queries instead.
SET SESSION foreign_key_checks = 0;

ALTER TABLE package ADD UNIQUE KEY uq_package_path (repository_id, path_sha256), ADD UNIQUE KEY uq_package_repository_id (repository_id, id), ADD KEY ix_package_namespace (repository_id, distribution_name, package_name, id), ADD KEY ix_package_full (repository_id, distribution_name, component_name, architecture, package_name, id);
ALTER TABLE package_relation ADD KEY ix_relation_lookup (repository_id, relation_kind, token_sha256, package_id), ADD CONSTRAINT fk_relation_package FOREIGN KEY (repository_id, package_id) REFERENCES package (repository_id, id) ON DELETE CASCADE;
ALTER TABLE suite_state ADD KEY ix_suite_pending (pending, desired_at, repository_id, distribution_name);
ALTER TABLE snapshot ADD KEY ix_snapshot_cleanup (created_at, repository_id, distribution_name, revision);
ALTER TABLE group_snapshot_stage ADD KEY ix_stage_cleanup (created_at, group_repository_id, distribution_name, snapshot_revision, binding_token);
ALTER TABLE group_binding ADD KEY ix_binding_page (group_repository_id, distribution_name, snapshot_revision, binding_token, id), ADD CONSTRAINT fk_binding_stage FOREIGN KEY (group_repository_id, distribution_name, snapshot_revision, binding_token) REFERENCES group_snapshot_stage (group_repository_id, distribution_name, snapshot_revision, binding_token) ON DELETE CASCADE;
SET SESSION foreign_key_checks = 1;
