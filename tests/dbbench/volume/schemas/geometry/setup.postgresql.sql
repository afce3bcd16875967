-- PostgreSQL's built-in geometric types (no PostGIS).
CREATE TABLE address (
    address_id  serial PRIMARY KEY,
    address     varchar(50) NOT NULL,
    location    point NOT NULL
);
CREATE INDEX idx_location ON address USING gist (location);

CREATE TABLE place (
    id      serial PRIMARY KEY,
    name    varchar(100) NOT NULL,
    spot    point NOT NULL,
    area    polygon NOT NULL,
    route   path,
    bounds  box NOT NULL,
    reach   circle,
    edge    lseg,
    axis    line
);
