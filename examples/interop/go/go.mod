module github.com/mrtr-state/interop-go

go 1.26.0

require github.com/mrtr-state/mrtr-state/go v0.0.0

replace github.com/mrtr-state/mrtr-state/go => ../../../go
