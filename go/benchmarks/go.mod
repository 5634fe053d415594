module github.com/mrtr-state/mrtr-state/go/benchmarks

go 1.26.0

require (
	github.com/go-jose/go-jose/v4 v4.1.9
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/mrtr-state/mrtr-state/go v0.0.0
)

replace github.com/mrtr-state/mrtr-state/go => ../
