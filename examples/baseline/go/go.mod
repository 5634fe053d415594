module github.com/mrtr-state/baseline-go

go 1.22

require (
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/gowebpki/jcs v1.0.2
)
