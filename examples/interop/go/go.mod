module github.com/mrtr-state/interop-go

go 1.26.0

require github.com/mrtr-state/mrtr-state/go v0.0.0

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
)

replace github.com/mrtr-state/mrtr-state/go => ../../../go
