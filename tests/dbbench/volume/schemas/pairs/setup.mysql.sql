-- Composite keys of a foreign key and a column of few values (the employees sample's salaries:
-- PRIMARY KEY (emp_no, from_date)): the pair is unique, the date alone cannot be (a date range of
-- a few years holds fewer days than the rows), nor a line number of 1 to 99.
CREATE TABLE employees (
    emp_no      int NOT NULL,
    birth_date  date NOT NULL,
    last_name   varchar(16) NOT NULL,
    PRIMARY KEY (emp_no)
) ENGINE = InnoDB;
CREATE TABLE salaries (
    emp_no     int NOT NULL,
    salary     int NOT NULL,
    from_date  date NOT NULL,
    to_date    date NOT NULL,
    FOREIGN KEY (emp_no) REFERENCES employees (emp_no) ON DELETE CASCADE,
    PRIMARY KEY (emp_no, from_date)
) ENGINE = InnoDB;
CREATE TABLE order_line (
    emp_no   int NOT NULL,
    line_no  smallint NOT NULL CHECK (line_no BETWEEN 1 AND 99),
    amount   decimal(8, 2) NOT NULL,
    PRIMARY KEY (emp_no, line_no),
    FOREIGN KEY (emp_no) REFERENCES employees (emp_no)
) ENGINE = InnoDB;
CREATE TABLE daily (
    day    date NOT NULL PRIMARY KEY,
    total  int NOT NULL
) ENGINE = InnoDB;
-- a short text key (employees' dept_no CHAR(4)): its numbers fit in 2 characters, 99 of them
CREATE TABLE departments (
    dept_no    char(2) NOT NULL PRIMARY KEY,
    dept_name  varchar(40) NOT NULL
) ENGINE = InnoDB;
CREATE TABLE dept_emp (
    emp_no   int NOT NULL,
    dept_no  char(2) NOT NULL,
    FOREIGN KEY (emp_no) REFERENCES employees (emp_no),
    FOREIGN KEY (dept_no) REFERENCES departments (dept_no),
    PRIMARY KEY (emp_no, dept_no)
) ENGINE = InnoDB;
