-- Inheritance children with CHECK constraints (pagila's old payment partitions), a rule that
-- routes inserts, and a declaratively partitioned table.
CREATE TABLE payment (
    payment_id    serial PRIMARY KEY,
    customer_id   integer NOT NULL,
    amount        numeric(5, 2) NOT NULL,
    payment_date  timestamp NOT NULL
);
CREATE TABLE payment_p2007_01 (
    CONSTRAINT payment_p2007_01_payment_date_check
        CHECK (payment_date >= '2007-01-01 00:00:00'::timestamp AND payment_date < '2007-02-01 00:00:00'::timestamp)
) INHERITS (payment);
CREATE TABLE payment_p2007_02 (
    CHECK (payment_date >= '2007-02-01' AND payment_date < '2007-03-01')
) INHERITS (payment);
CREATE RULE payment_insert_p2007_01 AS ON INSERT TO payment
    WHERE new.payment_date >= '2007-01-01' AND new.payment_date < '2007-02-01'
    DO INSTEAD INSERT INTO payment_p2007_01 VALUES (DEFAULT, new.customer_id, new.amount, new.payment_date);

CREATE TABLE measurement (
    city_id  integer NOT NULL,
    logdate  date NOT NULL,
    peak     integer
) PARTITION BY RANGE (logdate);
CREATE TABLE measurement_y2024 PARTITION OF measurement FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE TABLE measurement_y2025 PARTITION OF measurement FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');

CREATE TABLE sale (
    region  text NOT NULL,
    amount  integer NOT NULL
) PARTITION BY LIST (region);
CREATE TABLE sale_north PARTITION OF sale FOR VALUES IN ('north', 'arctic');
CREATE TABLE sale_south PARTITION OF sale FOR VALUES IN ('south');
