-- Views, a materialized view, functions, a procedure, an aggregate, a sequence and a rule beside
-- the tables: init describes the tables only.
CREATE SEQUENCE customer_seq;
CREATE TABLE customer (
    customer_id  integer PRIMARY KEY DEFAULT nextval('customer_seq'),
    name         varchar(100) NOT NULL,
    active       boolean NOT NULL DEFAULT true
);
CREATE TABLE rental (
    rental_id    serial PRIMARY KEY,
    customer_id  integer NOT NULL REFERENCES customer (customer_id),
    amount       numeric(5, 2) NOT NULL
);
CREATE VIEW customer_list AS SELECT customer_id, name FROM customer WHERE active;
CREATE VIEW rental_totals AS
    SELECT c.customer_id, c.name, sum(r.amount) AS total FROM customer c JOIN rental r USING (customer_id)
    GROUP BY c.customer_id, c.name;
CREATE MATERIALIZED VIEW rental_summary AS SELECT customer_id, count(*) AS rentals FROM rental GROUP BY customer_id;
CREATE FUNCTION total_of(p_customer integer) RETURNS numeric LANGUAGE sql STABLE AS $$
    SELECT COALESCE(sum(amount), 0) FROM rental WHERE customer_id = p_customer
$$;
CREATE FUNCTION shout(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN upper(t);
END
$$;
CREATE PROCEDURE deactivate(p_customer integer) LANGUAGE sql AS $$
    UPDATE customer SET active = false WHERE customer_id = p_customer
$$;
CREATE AGGREGATE group_concat(text) (SFUNC = textcat, STYPE = text);
CREATE RULE no_delete AS ON DELETE TO customer_list DO INSTEAD NOTHING;
