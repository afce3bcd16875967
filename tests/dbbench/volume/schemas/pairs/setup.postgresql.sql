-- Composite keys of a foreign key and a column of few values (the employees sample's salaries:
-- PRIMARY KEY (emp_no, from_date)): the pair is unique, the date alone cannot be (a date range of
-- a few years holds fewer days than the rows), nor a line number of 1 to 99.
CREATE TABLE employees (
    emp_no      integer PRIMARY KEY,
    birth_date  date NOT NULL,
    last_name   varchar(16) NOT NULL
);
CREATE TABLE salaries (
    emp_no     integer NOT NULL REFERENCES employees (emp_no) ON DELETE CASCADE,
    salary     integer NOT NULL,
    from_date  date NOT NULL,
    to_date    date NOT NULL,
    PRIMARY KEY (emp_no, from_date)
);
CREATE TABLE order_line (
    emp_no   integer NOT NULL REFERENCES employees (emp_no),
    line_no  smallint NOT NULL CHECK (line_no BETWEEN 1 AND 99),
    amount   numeric(8, 2) NOT NULL,
    PRIMARY KEY (emp_no, line_no)
);
CREATE TABLE daily (
    day    date PRIMARY KEY,
    total  integer NOT NULL
);
-- a short text key (employees' dept_no CHAR(4)): its numbers fit in 2 characters, 99 of them
CREATE TABLE departments (
    dept_no    char(2) PRIMARY KEY,
    dept_name  varchar(40) NOT NULL
);
CREATE TABLE dept_emp (
    emp_no   integer NOT NULL REFERENCES employees (emp_no),
    dept_no  char(2) NOT NULL REFERENCES departments (dept_no),
    PRIMARY KEY (emp_no, dept_no)
);
