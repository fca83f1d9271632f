package main

import "errors"

func untilSteady(iolens string, iops float64, pairs int) error {
	return errors.New("the --until-steady comparison needs iolens emulate, which has not landed")
}
