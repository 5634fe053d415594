module github.com/mrtr-state/interop-go

go 1.24.0

require (
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/gowebpki/jcs v1.0.2
)

require github.com/go-jose/go-jose/v4 v4.1.9
