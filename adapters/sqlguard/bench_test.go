package sqlguard

import "testing"

// benchQuery is a typical analytics query of about 500 characters: a CTE,
// joins, an aggregate, a window function and named parameters.
const benchQuery = `with recent as (
  select o.customer_id, o.total, o.created_at
  from orders o
  join customers c on c.id = o.customer_id
  where c.org = :org and o.created_at >= :since::timestamptz and o.status in ('paid', 'shipped')
)
select c.id, c.name, count(*) as orders, sum(r.total) as revenue,
       rank() over (partition by c.region order by sum(r.total) desc) as region_rank
from recent r
join customers c on c.id = r.customer_id
left join regions g on g.id = c.region
group by c.id, c.name, c.region
having sum(r.total) > :min_total
order by revenue desc
limit 50`

// BenchmarkVet measures one Vet of benchQuery. The budget is under
// 200µs per call.
func BenchmarkVet(b *testing.B) {
	if n := len(benchQuery); n < 450 || n > 650 {
		b.Fatalf("benchmark query is %d characters, want about 500", n)
	}
	v := New(Config{})
	if _, err := v.Vet(benchQuery); err != nil {
		b.Fatalf("benchmark query refused: %v", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := v.Vet(benchQuery); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVetDeepRefusal measures refusing 10,000 nested parentheses.
func BenchmarkVetDeepRefusal(b *testing.B) {
	v := New(Config{MaxLength: 1 << 20})
	q := "select " + repeat("(", 10000) + "1" + repeat(")", 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := v.Vet(q); err == nil {
			b.Fatal("admitted")
		}
	}
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for i := 0; i < n; i++ {
		b = append(b, s...)
	}
	return string(b)
}
