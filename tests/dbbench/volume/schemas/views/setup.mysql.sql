-- Views, functions and procedures beside the tables: init describes the tables only.
CREATE TABLE customer (
    customer_id  int NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name         varchar(100) NOT NULL,
    active       tinyint(1) NOT NULL DEFAULT 1
) ENGINE = InnoDB;
CREATE TABLE rental (
    rental_id    int NOT NULL AUTO_INCREMENT PRIMARY KEY,
    customer_id  int NOT NULL,
    amount       decimal(5, 2) NOT NULL,
    FOREIGN KEY (customer_id) REFERENCES customer (customer_id)
) ENGINE = InnoDB;
CREATE VIEW customer_list AS SELECT customer_id, name FROM customer WHERE active;
CREATE VIEW rental_totals AS
    SELECT c.customer_id, c.name, sum(r.amount) AS total FROM customer c JOIN rental r USING (customer_id)
    GROUP BY c.customer_id, c.name;
DELIMITER ;;
CREATE FUNCTION total_of(p_customer int) RETURNS decimal(10, 2) READS SQL DATA
BEGIN
    DECLARE v decimal(10, 2);
    SELECT COALESCE(SUM(amount), 0) INTO v FROM rental WHERE customer_id = p_customer;
    RETURN v;
END;;
CREATE PROCEDURE deactivate(IN p_customer int)
BEGIN
    UPDATE customer SET active = 0 WHERE customer_id = p_customer;
END;;
DELIMITER ;
