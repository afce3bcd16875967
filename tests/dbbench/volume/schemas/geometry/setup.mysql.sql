-- Geometry columns, NOT NULL with an SRID and a SPATIAL index (as sakila's address.location).
CREATE TABLE address (
    address_id  smallint unsigned NOT NULL AUTO_INCREMENT,
    address     varchar(50) NOT NULL,
    location    GEOMETRY NOT NULL /*!80003 SRID 0 */,
    PRIMARY KEY (address_id),
    SPATIAL KEY idx_location (location)
) ENGINE = InnoDB;

CREATE TABLE place (
    id      int NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name    varchar(100) NOT NULL,
    spot    POINT NOT NULL SRID 4326,
    area    POLYGON,
    route   LINESTRING NULL,
    many    MULTIPOINT NOT NULL,
    paths   MULTILINESTRING,
    areas   MULTIPOLYGON NOT NULL,
    things  GEOMETRYCOLLECTION NOT NULL,
    SPATIAL INDEX (spot)
) ENGINE = InnoDB;
