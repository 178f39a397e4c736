// Command quote prints the price of a parcel.
package main

import (
	"fmt"
	"os"
	"strconv"

	"example.com/shipping/rates"
)

func main() {
	grams, _ := strconv.Atoi(os.Args[len(os.Args)-1])
	cents, err := rates.Price(rates.Parcel{Grams: grams})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d.%02d\n", cents/100, cents%100)
}
