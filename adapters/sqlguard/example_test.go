package sqlguard_test

import (
	"fmt"

	"github.com/arrowhead-go/arrowhead/adapters/sqlguard"
)

func ExampleVetter_Vet() {
	v := sqlguard.New(sqlguard.Config{})

	q, err := v.Vet("select id, email from users where org = :org and lower(email) like :pattern")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(q.SQL)
	fmt.Println(q.Params, q.Tables)

	_, err = v.Vet("select 1; drop table users")
	fmt.Println(err)
	_, err = v.Vet("select pg_sleep(10)")
	fmt.Println(err)
	// Output:
	// SELECT "id", "email" FROM "users" WHERE (("org" = $1) AND (pg_catalog.lower("email") LIKE $2))
	// [org pattern] [users]
	// only a single SQL statement is allowed
	// a side-effecting, file, network or administrative function is not allowed
}
